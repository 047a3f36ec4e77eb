package actions

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// A declared HTTP action accepts any 2xx reply (DESIGN §10.2): the
// {text, documents} shape as before, any other body as an OpenAPI
// operation's.
func TestHTTPActionPlainReplies(t *testing.T) {
	t.Parallel()
	long := `{"items":"` + strings.Repeat("x", ReplyTextBytes) + `"}`
	tests := []struct {
		name     string
		handle   http.HandlerFunc
		wantText string
		wantDoc  string // the document's name, "" for none
	}{
		{"plain JSON", answer(200, "application/json", "{\n  \"id\": 42,\n  \"status\": \"open\"\n}"), `{"id":42,"status":"open"}`, ""},
		{"JSON of the old shape's names, wrong type", answer(200, "application/json", `{"text": 42}`), `{"text":42}`, ""},
		{"empty object", answer(200, "application/json", `{}`), `{}`, ""},
		{"JSON sent as text (the server sniffs text/plain) stays text", answer(200, "", `[1, 2]`), `[1, 2]`, ""},
		{"text", answer(200, "text/plain; charset=utf-8", "Customer 1 is Ada."), "Customer 1 is Ada.", ""},
		{"old shape", answer(200, "application/json", `{"text": "done"}`), "done", ""},
		{"no content", answer(204, "", ""), `crm.lookup answered 204 No Content with no content.`, ""},
		{"other type", answer(200, "application/pdf", "%PDF-1.4 fake"), `crm.lookup answered 200 OK (application/pdf, 13 bytes), saved as crm_lookup.pdf.`, "crm_lookup.pdf"},
		{"JSON larger than the text cap", answer(200, "application/json", long), "", "crm_lookup.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRecorder(t, tt.handle)
			r := lookupRegistry(t, srv, Limits{}, 0)
			res, err := r.Execute(context.Background(), call("crm.lookup", map[string]any{"customerId": "1"}))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if tt.wantText != "" && res.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", res.Text, tt.wantText)
			}
			switch {
			case tt.wantDoc == "" && len(res.Documents) > 0:
				t.Errorf("documents = %v, want none", res.Documents)
			case tt.wantDoc != "" && (len(res.Documents) != 1 || res.Documents[0].Name != tt.wantDoc):
				t.Errorf("documents = %v, want %s", res.Documents, tt.wantDoc)
			}
		})
	}
}

func TestHTTPActionLongJSONIsClippedAndKeptWhole(t *testing.T) {
	t.Parallel()
	long := `{"items": "` + strings.Repeat("x", 2*ReplyTextBytes) + `"}`
	srv := newRecorder(t, answer(200, "application/json", long))
	r := lookupRegistry(t, srv, Limits{}, 0)
	res, err := r.Execute(context.Background(), call("crm.lookup", map[string]any{"customerId": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, `{"items":"xxx`) || !strings.Contains(res.Text, "the whole reply is the document crm_lookup.json") {
		t.Errorf("Text = %q", textclip.Clip(res.Text, 200))
	}
	if len(res.Text) > ReplyTextBytes+200 {
		t.Errorf("Text is %d bytes, want it clipped near %d", len(res.Text), ReplyTextBytes)
	}
	if string(res.Documents[0].Content) != long || res.Documents[0].MimeType != "application/json" {
		t.Errorf("document = %s %d bytes", res.Documents[0].MimeType, len(res.Documents[0].Content))
	}
}

// plainActionRegistry declares tickets.get as GET /tickets/{id} with body
// "parameters", and tickets.comment as POST /tickets/{id}/comments.
func plainActionRegistry(t *testing.T, srv *recorder) *Registry {
	t.Helper()
	params := func(extra string) map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id": map[string]any{"type": "string"}, extra: map[string]any{"type": "string"},
			},
			"required": []any{"id"},
		}
	}
	return mustNew(t, Config{HTTPActions: []HTTPActionConfig{
		{
			Name: "tickets.get", Description: "Read a ticket", URL: srv.URL + "/api/tickets/{id}",
			Method: "GET", Body: BodyParameters, Effect: workflow.EffectRead, Parameters: params("fields"),
			Headers: map[string]string{"Authorization": "Bearer tickets-secret-123"},
		},
		{
			Name: "tickets.comment", Description: "Comment on a ticket", URL: srv.URL + "/api/tickets/{id}/comments",
			Body: BodyParameters, Parameters: params("text"),
		},
		{
			Name: "tickets.close", Description: "Close a ticket (envelope)", URL: srv.URL + "/api/tickets/{id}/close",
			Method: "PUT", Parameters: params("reason"),
		},
	}}, nil, WithHTTPClient(srv.Client()))
}

func TestHTTPActionGETWithURLPlaceholder(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(200, "application/json", `{"id": "a/b 1", "status": "open"}`))
	r := plainActionRegistry(t, srv)
	res, err := r.Execute(context.Background(), call("tickets.get", map[string]any{"id": "a/b 1", "fields": "status"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `{"id":"a/b 1","status":"open"}` {
		t.Errorf("Text = %q", res.Text)
	}
	got := srv.got()[0]
	if got.Method != "GET" || got.Path != "/api/tickets/a%2Fb%201" || got.Query != "fields=status" || got.Body != "" {
		t.Errorf("request = %s %s ? %s body %q, want GET /api/tickets/a%%2Fb%%201 ? fields=status, no body", got.Method, got.Path, got.Query, got.Body)
	}
	if got.Header.Get("Authorization") != "Bearer tickets-secret-123" || got.Header.Get("Idempotency-Key") == "" {
		t.Errorf("headers = %v", got.Header)
	}
}

func TestHTTPActionBodyParametersAndEnvelopePlaceholder(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(201, "application/json", `{"ok": true}`))
	r := plainActionRegistry(t, srv)
	if _, err := r.Execute(context.Background(), call("tickets.comment", map[string]any{"id": "7", "text": "hi"})); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background(), call("tickets.close", map[string]any{"id": "7", "reason": "done"})); err != nil {
		t.Fatal(err)
	}
	got := srv.got()
	if got[0].Method != "POST" || got[0].Path != "/api/tickets/7/comments" || got[0].Body != `{"text":"hi"}` {
		t.Errorf("comment request = %s %s %s", got[0].Method, got[0].Path, got[0].Body)
	}
	if got[1].Method != "PUT" || got[1].Path != "/api/tickets/7/close" || !strings.Contains(got[1].Body, `"parameters":{"id":"7","reason":"done"}`) {
		t.Errorf("close request = %s %s %s", got[1].Method, got[1].Path, got[1].Body)
	}
}

func TestHTTPActionPathValueCannotLeaveItsSegment(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(200, "application/json", `{}`))
	r := plainActionRegistry(t, srv)
	for _, action := range []string{"tickets.get", "tickets.close"} {
		for _, id := range []string{"..", ".", "", `\..\admin`, `..\admin`, `a\..`, `\.\x`, "a/../b", `..;x\y`} {
			_, err := r.Execute(context.Background(), call(action, map[string]any{"id": id}))
			wantKind(t, err, workflow.KindInvalid)
			if lines := r.ValidateParameters(action, map[string]any{"id": id}); len(lines) != 1 || !strings.Contains(lines[0], "cannot be a path segment") {
				t.Errorf("%s id %q: problems %v", action, id, lines)
			}
		}
	}
	if n := len(srv.got()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestHTTPActionRequestConfigProblems(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}
	tests := []struct {
		name string
		ac   HTTPActionConfig
		want string
	}{
		{"unknown method", HTTPActionConfig{Method: "FETCH", URL: "http://h/x"}, `method "FETCH" must be one of`},
		{"GET with the envelope", HTTPActionConfig{Method: "get", URL: "http://h/x"}, "add body: parameters"},
		{"unknown body", HTTPActionConfig{Body: "raw", URL: "http://h/x"}, `body "raw" must be envelope or parameters`},
		{"placeholder of no parameter", HTTPActionConfig{Body: BodyParameters, URL: "http://h/x/{nope}", Parameters: schema}, "{nope} names no parameter"},
		{"optional placeholder", HTTPActionConfig{Body: BodyParameters, URL: "http://h/x/{id}", Parameters: schema}, "{id} must be a required parameter"},
		{"documents with parameters", HTTPActionConfig{Body: BodyParameters, URL: "http://h/x", Documents: workflow.DocumentsRequired}, "documents cannot be sent"},
		{"connection with parameters", HTTPActionConfig{Body: BodyParameters, URL: "http://h/x", ConnectionKind: KindHTTP}, "connectionKind cannot be used"},
		{"placeholder in the host", HTTPActionConfig{Body: BodyParameters, URL: "http://{tenant}.h/x"}, "allowed only in the path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.ac.Name, tt.ac.Description = "tickets.x", "x"
			_, err := New(Config{HTTPActions: []HTTPActionConfig{tt.ac}}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
