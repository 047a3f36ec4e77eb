package doctext

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// doc returns an input document as the engine hands it to actions.
func doc(name, mimeType string, content []byte) workflow.DocumentContent {
	return workflow.DocumentContent{
		Document: workflow.Document{ID: "doc_" + name, Name: name, MimeType: mimeType, Size: int64(len(content))},
		Content:  content,
	}
}

// pdfBytes writes a real PDF with one page per element of pages, each page
// one line per string.
func pdfBytes(t testing.TB, pages ...[]string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetFont("Helvetica", "", 12)
	for _, lines := range pages {
		f.AddPage()
		for _, l := range lines {
			f.Cell(0, 10, l)
			f.Ln(12)
		}
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestExtractGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, mimeType string
		format               Format
	}{
		{"html text", "page.html", "text/html; charset=utf-8", Text},
		{"html markdown", "page.html", "text/html", Markdown},
		{"csv text", "customers.csv", "text/csv", Text},
		{"csv markdown", "customers.csv", "text/csv", Markdown},
		{"json text", "customer.json", "application/json", Text},
		{"json markdown", "customer.json", "", Markdown}, // type from the extension
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Extract(doc(tt.file, tt.mimeType, b), tt.format)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			golden(t, "extract_"+strings.ReplaceAll(tt.name, " ", "_")+".golden", got)
		})
	}
}

func TestExtractHTMLDropsCode(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []Format{Text, Markdown} {
		text, err := htmlText(b, format)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"do-not-extract", "SCRIPT TEXT", "inline script", "font-family", "a comment", "Enable JavaScript", "javascript:"} {
			if strings.Contains(text, banned) {
				t.Errorf("%s output contains %q:\n%s", format, banned, text)
			}
		}
		for _, kept := range []string{"Revenue grew by", "Churn fell to 2%", "North", "code   keeps"} {
			if !strings.Contains(text, kept) {
				t.Errorf("%s output lacks %q:\n%s", format, kept, text)
			}
		}
	}
}

func TestExtractCharsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mimeType string
		content        []byte
		want           string
	}{
		{"declared latin-1 text", "text/plain; charset=iso-8859-1", []byte("caf\xe9"), "café"},
		{"html meta charset", "text/html", []byte("<html><head><meta charset=\"windows-1252\"></head><body><p>na\xefve \x80</p></body></html>"), "naïve €\n"},
		{"utf-16 with BOM", "text/plain", []byte("\xff\xfeh\x00i\x00"), "hi"},
		{"utf-8 unchanged", "text/csv", []byte("a,b\nü,ß\n"), "a,b\nü,ß\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Extract(doc("f", tt.mimeType, tt.content), Text)
			if err != nil || got != tt.want {
				t.Errorf("Extract = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mimeType string
		content        string
		want           Format
	}{
		{"a.txt", "text/plain; charset=utf-8", "x", Text},
		{"a", "text/x-markdown", "x", Markdown},
		{"a", "application/csv", "x", CSV},
		{"a", "application/ld+json", "{}", JSON},
		{"a", "application/xhtml+xml", "<p/>", HTML},
		{"a", "text/xml", "<a/>", Text},
		{"a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "PK", ""},
		{"a.md", "application/octet-stream", "x", Markdown},
		{"a.HTM", "", "x", HTML},
		{"a.log", "", "x", Text},
		{"scan", "", "%PDF-1.7 ...", PDF},
		{"blob", "", "\x00\x01\x02", ""},
		{"notes", "", "plain words", Text},
	}
	for _, tt := range tests {
		if got := Detect(doc(tt.name, tt.mimeType, []byte(tt.content))); got != tt.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", tt.name, tt.mimeType, got, tt.want)
		}
	}
}

func BenchmarkExtractHTML(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("testdata", "page.html"))
	if err != nil {
		b.Fatal(err)
	}
	d := doc("page.html", "text/html", page)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := Extract(d, Markdown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractPDF(b *testing.B) {
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = "A line of a quarterly report with some numbers 12345."
	}
	pdf := pdfBytes(b, lines, lines, lines)
	d := workflow.DocumentContent{Document: workflow.Document{Name: "r.pdf", MimeType: "application/pdf"}, Content: pdf}
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		if _, err := Extract(d, Text); err != nil {
			b.Fatal(err)
		}
	}
}
