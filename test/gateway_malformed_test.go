package test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestMalformedRequests sends bad requests of every kind: each answers a
// 4xx problem+json (never a 5xx) and nothing is written.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "mal1 baseline"}, &wf)
	g.waitDone(t, gwAlice, wf.ID)
	listBefore := listIDs(t, g, gwAlice)
	msgsBefore := len(g.messages(t, gwAlice, wf.ID))

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	doc := func(name, content string) map[string]any { return map[string]any{"name": name, "content": content} }
	withDocs := func(docs ...any) map[string]any { return map[string]any{"prompt": "x", "documents": docs} }
	many := make([]any, 21)
	for i := range many {
		many[i] = doc(fmt.Sprintf("f%d.txt", i), b64("x"))
	}
	const create = "/api/v1/workflows"
	wfPath := "/api/v1/workflows/" + wf.ID
	unknown := "/api/v1/workflows/wf_01m81wm1kw50m784awmbs1pfed"
	tests := []struct {
		name, method, path string
		body               any
		header             []string
		status             int // 0: any 4xx
	}{
		{"bad json", "POST", create, "{", nil, 400},
		{"empty body", "POST", create, "", nil, 400},
		{"json null", "POST", create, "null", nil, 0},
		{"json array", "POST", create, "[]", nil, 422},
		{"json string", "POST", create, `"prompt"`, nil, 422},
		{"prompt missing", "POST", create, map[string]any{}, nil, 422},
		{"prompt number", "POST", create, map[string]any{"prompt": 5}, nil, 422},
		{"prompt null", "POST", create, map[string]any{"prompt": nil}, nil, 422},
		{"prompt empty", "POST", create, map[string]any{"prompt": ""}, nil, 422},
		{"prompt blank", "POST", create, map[string]any{"prompt": " \n\t "}, nil, 422},
		{"prompt too long", "POST", create, map[string]any{"prompt": strings.Repeat("p", 20001)}, nil, 422},
		{"unknown field", "POST", create, map[string]any{"prompt": "x", "userId": "bob"}, nil, 422},
		{"mode unknown", "POST", create, map[string]any{"prompt": "x", "mode": "yolo"}, nil, 422},
		{"mode number", "POST", create, map[string]any{"prompt": "x", "mode": 1}, nil, 422},
		{"maxSteps 0", "POST", create, map[string]any{"prompt": "x", "maxSteps": 0}, nil, 422},
		{"maxSteps 101", "POST", create, map[string]any{"prompt": "x", "maxSteps": 101}, nil, 422},
		{"maxSteps negative", "POST", create, map[string]any{"prompt": "x", "maxSteps": -3}, nil, 422},
		{"maxSteps string", "POST", create, map[string]any{"prompt": "x", "maxSteps": "5"}, nil, 422},
		{"maxSteps float", "POST", create, map[string]any{"prompt": "x", "maxSteps": 2.5}, nil, 422},
		{"documents object", "POST", create, map[string]any{"prompt": "x", "documents": map[string]any{}}, nil, 422},
		{"documents string", "POST", create, map[string]any{"prompt": "x", "documents": "a.txt"}, nil, 422},
		{"document without name", "POST", create, withDocs(map[string]any{"content": b64("x")}), nil, 422},
		{"document without content", "POST", create, withDocs(map[string]any{"name": "a.txt"}), nil, 422},
		{"document extra field", "POST", create, withDocs(map[string]any{"name": "a", "content": b64("x"), "path": "/etc"}), nil, 422},
		{"bad base64", "POST", create, withDocs(doc("a.txt", "%%%not base64")), nil, 422},
		{"url-safe base64", "POST", create, withDocs(doc("a.txt", "-_-_")), nil, 422},
		{"name dotdot path", "POST", create, withDocs(doc("../etc/passwd", b64("x"))), nil, 422},
		{"name slash", "POST", create, withDocs(doc("dir/a.txt", b64("x"))), nil, 422},
		{"name backslash", "POST", create, withDocs(doc(`C:\a.txt`, b64("x"))), nil, 422},
		{"name dotdot", "POST", create, withDocs(doc("..", b64("x"))), nil, 422},
		{"name NUL", "POST", create, withDocs(doc("a\x00.txt", b64("x"))), nil, 422},
		{"name newline", "POST", create, withDocs(doc("a\n.txt", b64("x"))), nil, 422},
		{"name too long", "POST", create, withDocs(doc(strings.Repeat("n", 300), b64("x"))), nil, 422},
		{"duplicate names", "POST", create, withDocs(doc("a", b64("x")), doc("a", b64("y"))), nil, 422},
		{"bad mime type", "POST", create, withDocs(map[string]any{"name": "a", "mimeType": "not a type", "content": b64("x")}), nil, 422},
		{"too many documents", "POST", create, withDocs(many...), nil, 422},
		{"document over 10 MiB", "POST", create, withDocs(doc("big.bin", b64(strings.Repeat("b", 10<<20+1)))), nil, 413},
		{"body over 32 MiB", "POST", create, `{"prompt":"` + strings.Repeat("a", 33<<20) + `"}`, nil, 413},
		{"text/plain body", "POST", create, "prompt=x", []string{"Content-Type", "text/plain"}, 415},
		{"list limit 0", "GET", create + "?limit=0", nil, nil, 422},
		{"list limit text", "GET", create + "?limit=ten", nil, nil, 422},
		{"list limit 1000", "GET", create + "?limit=1000", nil, nil, 422},
		{"list bad cursor", "GET", create + "?cursor=%00garbage", nil, nil, 0},
		{"list unknown query", "GET", create + "?user=bob", nil, nil, 422},
		{"malformed id", "GET", "/api/v1/workflows/wf_nope", nil, nil, 404},
		{"unknown id", "GET", unknown, nil, nil, 404},
		{"dotdot id", "POST", "/api/v1/workflows/%2e%2e/rounds", map[string]any{"prompt": "x"}, nil, 404},
		{"round on unknown id", "POST", unknown + "/rounds", map[string]any{"prompt": "x"}, nil, 404},
		{"round without prompt", "POST", wfPath + "/rounds", map[string]any{}, nil, 422},
		{"round with mode", "POST", wfPath + "/rounds", map[string]any{"prompt": "x", "mode": "react"}, nil, 422},
		{"round bad document", "POST", wfPath + "/rounds", withDocs(doc("a/b", b64("x"))), nil, 422},
		{"stop a completed workflow", "POST", wfPath + "/stop", nil, nil, 409},
		{"resume a completed workflow", "POST", wfPath + "/resume", nil, nil, 409},
		{"messages after -1", "GET", wfPath + "/messages?after=-1", nil, nil, 422},
		{"messages after text", "GET", wfPath + "/messages?after=last", nil, nil, 422},
		{"document bad id", "GET", wfPath + "/documents/doc_bad", nil, nil, 404},
		{"document unknown id", "GET", wfPath + "/documents/doc_01m81wm1kw50m784awmbs1pfed", nil, nil, 404},
		{"events bad Last-Event-ID", "GET", wfPath + "/events", nil, []string{"Last-Event-ID", "abc"}, 422},
		{"delete unknown", "DELETE", unknown, nil, nil, 404},
		{"put collection", "PUT", create, map[string]any{"prompt": "x"}, nil, 405},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, hdr, body := g.send(t, tt.method, tt.path, gwAlice, tt.body, tt.header...)
			if status < 400 || status > 499 || (tt.status != 0 && status != tt.status) {
				t.Fatalf("status %d, want %d (4xx): %.300s", status, tt.status, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Content-Type %q: %.200s", ct, body)
			}
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Status != status || p.Detail == "" {
				t.Errorf("problem %+v (%v): %.300s", p, err, body)
			}
		})
	}
	if after := listIDs(t, g, gwAlice); !reflect.DeepEqual(after, listBefore) {
		t.Errorf("workflows changed: %v → %v", listBefore, after)
	}
	if n := len(g.messages(t, gwAlice, wf.ID)); n != msgsBefore {
		t.Errorf("messages changed: %d → %d", msgsBefore, n)
	}
	if strings.Contains(g.stderr.String(), `"status":5`) {
		t.Errorf("a request answered 5xx:\n%s", g.stderr)
	}
}

func listIDs(t *testing.T, g *gateway, token string) []string {
	t.Helper()
	var out struct {
		Workflows []wfView `json:"workflows"`
	}
	g.expect(t, 200, "GET", "/api/v1/workflows?limit=200", token, nil, &out)
	ids := make([]string, len(out.Workflows))
	for i, w := range out.Workflows {
		ids[i] = w.ID + ":" + w.Status
	}
	return ids
}
