package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedRequestsSayWhatToChange: through the built gateway, a body
// over limits.maxBodyBytes, a document over limits.maxUploadBytes and a
// form-encoded body are refused with a problem naming the setting or the
// header to send, and no problem echoes the body.
func TestRefusedRequestsSayWhatToChange(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(file, []byte("limits:\n  maxBodyBytes: 65536\n  maxUploadBytes: 16384\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "LLM_PROVIDER=scripted", "GATEWAY_CONFIG="+file)
	const marker = "BODY-MARKER-7f3a"
	doc := func(size int) string {
		return `{"prompt":"` + marker + `","documents":[{"name":"a.txt","content":"` + b64s(strings.Repeat("x", size)) + `"}]}`
	}
	tests := []struct {
		name   string
		body   string
		ctype  string
		status int
		want   []string
	}{
		{"body over maxBodyBytes", doc(60000), "application/json", 413,
			[]string{"65536 bytes", "limits.maxBodyBytes", "base64", "limits.maxUploadBytes", "16384"}},
		{"document over maxUploadBytes", doc(20000), "application/json", 413,
			[]string{"body.documents[0]", "16384 bytes", "limits.maxUploadBytes", "decoded bytes"}},
		{"form-encoded", "prompt=" + marker, "application/x-www-form-urlencoded", 415,
			[]string{"Content-Type: application/json", "application/x-www-form-urlencoded"}},
		{"plain text JSON", `{"prompt":"` + marker + `"}`, "text/plain", 415,
			[]string{"Content-Type: application/json", "text/plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := g.send(t, "POST", "/api/v1/workflows", gwAlice, tt.body, "Content-Type", tt.ctype)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			var p struct{ Detail string }
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("not a problem: %v: %s", err, body)
			}
			for _, want := range tt.want {
				if !strings.Contains(p.Detail, want) {
					t.Errorf("detail %q lacks %q", p.Detail, want)
				}
			}
			if strings.Contains(string(body), marker) {
				t.Errorf("the problem echoes the body: %s", body)
			}
		})
	}
}
