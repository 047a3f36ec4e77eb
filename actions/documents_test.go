package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twostep/twostep/doctext"
	"github.com/twostep/twostep/workflow"
)

// testdataDoc reads doctext's testdata/name as an input document.
func testdataDoc(t *testing.T, name, mimeType string) workflow.DocumentContent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "doctext", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return doc(name, mimeType, b)
}

// document.extract makes one document per input, named after it, whose
// content is doctext's extraction (its golden files are in doctext).
func TestExtractDocuments(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	tests := []struct {
		name, file, mimeType, format string
	}{
		{"html text", "page.html", "text/html; charset=utf-8", "text"},
		{"html markdown", "page.html", "text/html", "markdown"},
		{"csv text", "customers.csv", "text/csv", "text"},
		{"csv markdown", "customers.csv", "text/csv", "markdown"},
		{"json text", "customer.json", "application/json", "text"},
		{"json markdown", "customer.json", "", "markdown"}, // type from the extension
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := testdataDoc(t, tt.file, tt.mimeType)
			res, err := r.Execute(context.Background(), call(ExtractAction, map[string]any{"format": tt.format}, in))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if len(res.Documents) != 1 {
				t.Fatalf("got %d documents, want 1", len(res.Documents))
			}
			d := res.Documents[0]
			ext := map[string]string{"text": ".txt", "markdown": ".md"}[tt.format]
			if want := strings.TrimSuffix(tt.file, filepath.Ext(tt.file)) + ext; d.Name != want {
				t.Errorf("name = %q, want %q", d.Name, want)
			}
			if d.Size != int64(len(d.Content)) {
				t.Errorf("size = %d, content %d bytes", d.Size, len(d.Content))
			}
			want, err := doctext.Extract(in, doctext.Format(tt.format))
			if err != nil || string(d.Content) != want {
				t.Errorf("content = %q, want doctext.Extract's %q (%v)", d.Content, want, err)
			}
		})
	}
}

func TestExtractPDF(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	pdf := pdfBytes(t, []string{"Quarterly report for ACME", "Revenue grew by 12 percent."}, []string{"Second page: outlook"})
	for _, mimeType := range []string{"application/pdf", "application/octet-stream"} { // sniffed by magic bytes too
		res, err := r.Execute(context.Background(), call(ExtractAction, nil, doc("report.bin", mimeType, pdf)))
		if err != nil {
			t.Fatalf("%s: Execute: %v", mimeType, err)
		}
		want := "Quarterly report for ACME\nRevenue grew by 12 percent.\n\nSecond page: outlook\n"
		if got := string(res.Documents[0].Content); got != want {
			t.Errorf("%s: text = %q, want %q", mimeType, got, want)
		}
		if !strings.Contains(res.Text, "report.txt from report.bin") || !strings.Contains(res.Text, "Quarterly report for ACME") {
			t.Errorf("result text = %q", res.Text)
		}
	}
}

func TestExtractErrorsPerDocument(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	_, err := r.Execute(context.Background(), call(ExtractAction, nil,
		doc("notes.txt", "text/plain", []byte("fine")),
		doc("photo.png", "image/png", []byte("\x89PNG\r\n\x1a\n")),
		doc("broken.pdf", "application/pdf", []byte("%PDF-1.4 this is not a pdf")),
		doc("bad.json", "application/json", []byte(`{"a":`)),
	))
	wantKind(t, err, workflow.KindInvalid)
	msg := workflow.PublicMessage(err)
	for _, want := range []string{
		"cannot extract text from 3 of 4 documents",
		`photo.png: unsupported type "image/png": supported are plain text, Markdown, CSV, JSON, HTML and PDF`,
		"broken.pdf: cannot read it as pdf: not a readable PDF",
		"bad.json: cannot read it as json: not valid JSON",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestExtractManyDocumentsUniqueNames(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	res, err := r.Execute(context.Background(), call(ExtractAction, map[string]any{"format": "markdown"},
		doc("a.md", "text/markdown", []byte("# A\r\n\uFEFFbody")),
		doc("a.html", "text/html", []byte("<p>from html</p>")),
		doc("../../etc/a.txt", "text/plain", []byte("\xfflatin-1 text")),
	))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var names, contents []string
	for _, d := range res.Documents {
		names = append(names, d.Name)
		contents = append(contents, string(d.Content))
	}
	if got, want := strings.Join(names, ","), "a.md,a_2.md,a_3.md"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	if contents[0] != "# A\n\uFEFFbody" || contents[1] != "from html\n" || contents[2] != "ÿlatin-1 text" {
		t.Errorf("contents = %q", contents)
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{Limits: Limits{MaxDocumentBytes: 64}}, nil)
	tests := []struct {
		name     string
		params   map[string]any
		wantName string
		wantMime string
		kind     workflow.Kind
	}{
		{"markdown by extension", map[string]any{"fileName": "report.md", "content": "# Title"}, "report.md", "text/markdown; charset=utf-8", ""},
		{"explicit mime", map[string]any{"fileName": "data", "content": "a,b", "mimeType": "text/csv"}, "data", "text/csv", ""},
		{"path stripped", map[string]any{"fileName": "../../etc/passwd.txt", "content": "x"}, "passwd.txt", "text/plain; charset=utf-8", ""},
		{"json checked", map[string]any{"fileName": "x.json", "content": "{not json"}, "", "", workflow.KindInvalid},
		{"too large", map[string]any{"fileName": "big.txt", "content": strings.Repeat("x", 65)}, "", "", workflow.KindInvalid},
		{"unusable name", map[string]any{"fileName": "..", "content": "x"}, "", "", workflow.KindInvalid},
		{"bad mime", map[string]any{"fileName": "a.txt", "content": "x", "mimeType": "not a mime"}, "", "", workflow.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := r.Execute(context.Background(), call(GenerateAction, tt.params))
			if tt.kind != "" {
				wantKind(t, err, tt.kind)
				return
			}
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			d := res.Documents[0]
			if d.Name != tt.wantName || d.MimeType != tt.wantMime || string(d.Content) != tt.params["content"] {
				t.Errorf("document = %q %q %q", d.Name, d.MimeType, d.Content)
			}
			if !strings.Contains(res.Text, tt.wantName) {
				t.Errorf("text %q does not name the document", res.Text)
			}
		})
	}
}
