package openapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideDoc is a document whose only schema is a $ref to ref.
func outsideDoc(ref string) string {
	return `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /tickets:
    post:
      operationId: createTicket
      requestBody:
        content:
          application/json:
            schema: {$ref: "` + ref + `"}
      responses: {"200": {description: ok}}
`
}

// A file document's $ref may not leave the document's folder: not with
// "..", not as an absolute path, not through a symlink in the folder that
// points outside. Load refuses each, and its error never quotes the
// outside file's content.
func TestFileDocumentRefsStayInTheirFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "specs")
	outside := filepath.Join(root, "private", "passwd")
	if err := os.MkdirAll(filepath.Dir(outside), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const content = "root:x:0:0:rootpw-TOPSECRET:/root:/bin/bash\n"
	if err := os.WriteFile(outside, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"../private/passwd#/x", outside + "#/x", "link.yaml#/x", "./../private/passwd"} {
		t.Run(ref, func(t *testing.T) {
			p := filepath.Join(dir, "doc.yaml")
			if err := os.WriteFile(p, []byte(outsideDoc(ref)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := tryMount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: p, BaseURL: "http://127.0.0.1:1"}}}, nil)
			switch {
			case err == nil:
				t.Fatal("Load accepted a $ref outside the document's folder")
			case strings.Contains(err.Error(), "TOPSECRET") || strings.Contains(err.Error(), "root:x"):
				t.Errorf("Load's error quotes the outside file: %v", err)
			case !strings.Contains(err.Error(), "outside"):
				t.Errorf("Load: %v, want it to say the $ref leaves the document's folder", err)
			}
		})
	}
}

// A file that is not an OpenAPI document is refused without being quoted
// (YAML's decoding errors quote the value they could not decode).
func TestFileDocumentIsNotQuoted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "doc.yaml")
	if err := os.WriteFile(p, []byte("root:x:0:0:rootpw-TOPSECRET:/root:/bin/bash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := tryMount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: p, BaseURL: "http://127.0.0.1:1"}}}, nil)
	if err == nil || strings.Contains(err.Error(), "TOPSECRET") || strings.Contains(err.Error(), "root:x") {
		t.Errorf("Load: %v, want a refusal that does not quote the file", err)
	}
}
