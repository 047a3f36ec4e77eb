package doctext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
	"time"
)

// rawPDF writes objs as objects 1..n with a correct xref table; object 1
// is the catalog.
func rawPDF(objs ...string) []byte {
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, x)
	return []byte(b.String())
}

// TestPDFTextHostileFiles: whatever a PDF claims (a billion pages, a page
// tree or /Parent chain that loops, a stream that inflates to gigabytes),
// pdfText (here with a 4 MiB stream budget) answers promptly, with the text or an error saying why.
func TestPDFTextHostileFiles(t *testing.T) {
	t.Parallel()
	const ops = "BT /F1 12 Tf 72 712 Td (Hello) Tj ET"
	content := fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(ops), ops)
	var bomb bytes.Buffer
	zw := zlib.NewWriter(&bomb)
	zw.Write([]byte("BT (x) Tj ET\n"))
	zw.Write(make([]byte, 8<<20)) // 8 MiB of zeros deflate to about 8 KB
	zw.Close()
	bombContent := fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", bomb.Len(), bomb.String())
	const (
		catalog = "<< /Type /Catalog /Pages 2 0 R >>"
		page    = "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
		font    = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
	)
	tests := []struct {
		name    string
		pdf     []byte
		want    string // the text, or a part of the error
		wantErr bool
	}{
		{"well formed", rawPDF(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page, content, font), "Hello\n", false},
		{"count of two billion", rawPDF(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>", page, content, font), "Hello\n", false},
		{"kids loop", rawPDF(catalog, "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", page, content, font), "(or loops)", true},
		{"parent loop", rawPDF(catalog, "<< /Type /Pages /Kids [3 0 R] /Parent 3 0 R /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>", content, font), "/Parent chain", true},
		{"deflate bomb", rawPDF(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page, bombContent, font), "inflate to more than 4194304 bytes", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			type result struct {
				text string
				err  error
			}
			done := make(chan result, 1)
			go func() {
				text, err := pdfTextWithin(tt.pdf, 4<<20)
				done <- result{text, err}
			}()
			var got result
			select {
			case got = <-done:
			case <-time.After(time.Minute):
				t.Fatal("pdfText still runs after a minute") // the goroutine leaks; the test fails anyway
			}
			switch {
			case tt.wantErr && (got.err == nil || !strings.Contains(got.err.Error(), tt.want)):
				t.Errorf("pdfText = %q, %v; want an error containing %q", got.text, got.err, tt.want)
			case !tt.wantErr && (got.err != nil || got.text != tt.want):
				t.Errorf("pdfText = %q, %v; want %q", got.text, got.err, tt.want)
			}
		})
	}
}
