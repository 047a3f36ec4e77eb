package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

// TestBoundProblem: whatever errors a validation collected, the answer
// keeps at most maxProblemErrors of them plus one "… and N more" line,
// echoes no arrays, and encodes in at most maxProblemBytes.
func TestBoundProblem(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("\x01é", 50_000)
	for _, tt := range []struct {
		name     string
		errs     int
		loc, msg string
		value    any
		wantMore string
	}{
		{"few", 3, "body.documents[0]", "expected object", 1.0, ""},
		{"a million", 1_000_000, "body.documents[0]", "expected object", 1.0, "… and 999980 more"},
		{"huge fields", 50, huge, huge, huge, "more"},
		{"array values", 30, "body.documents", "expected at most 20 items", []any{1.0, 2.0}, "… and 10 more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			em := &huma.ErrorModel{Status: 422, Title: "Unprocessable Entity", Detail: huge}
			for range tt.errs {
				em.Errors = append(em.Errors, &huma.ErrorDetail{Location: tt.loc, Message: tt.msg, Value: tt.value})
			}
			v, err := boundProblem(nil, "422", em)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(v)
			if len(b) > maxProblemBytes {
				t.Errorf("answer has %d bytes, over %d", len(b), maxProblemBytes)
			}
			got := v.(*huma.ErrorModel)
			if len(got.Errors) > maxProblemErrors+1 {
				t.Errorf("%d errors kept", len(got.Errors))
			}
			last := got.Errors[len(got.Errors)-1].Message
			if tt.wantMore == "" && strings.Contains(last, "more") || !strings.Contains(last, tt.wantMore) {
				t.Errorf("last line %q, want %q", last, tt.wantMore)
			}
			for _, d := range got.Errors {
				if _, isArray := d.Value.([]any); isArray {
					t.Errorf("array echoed at %s", d.Location)
				}
			}
		})
	}
}

// TestArrayBodyAnswerIsBounded: a body whose documents are a long array
// of numbers is refused while it is read, with one short problem, on both
// upload routes; the same numbers under an unknown field are refused the
// same way instead of being parsed.
func TestArrayBodyAnswerIsBounded(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", "completed")
	env.store.put(w)
	ones := strings.TrimSuffix(strings.Repeat("1,", 200_000), ",")
	for _, tt := range []struct{ name, path, body, want string }{
		{"create", "/api/v1/workflows", `{"prompt":"x","documents":[` + ones + `]}`, "more than 20 documents"},
		{"rounds", "/api/v1/workflows/" + w.ID + "/rounds", `{"prompt":"x","documents":[` + ones + `]}`, "more than 20 documents"},
		{"other field", "/api/v1/workflows", `{"prompt":"x","junk":[` + ones + `]}`, "JSON values"},
		{"21 objects", "/api/v1/workflows", `{"prompt":"x","documents":[` + strings.TrimSuffix(strings.Repeat(`{"name":"a","content":""},`, 21), ",") + `]}`, "more than 20 documents"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := env.do(t, "POST", tt.path, aliceToken, tt.body)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tt.want) || rec.Body.Len() > 1024 {
				t.Errorf("%d, %d bytes: %.300s", rec.Code, rec.Body.Len(), rec.Body)
			}
		})
	}
}

// TestMaxDocumentsInSchema: the OpenAPI document states the limit.
func TestMaxDocumentsInSchema(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxDocuments = 7 })
	doc, err := env.srv.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(doc), `"maxItems": 7`); n != 2 {
		t.Errorf("maxItems 7 appears %d times, want 2 (create, rounds)", n)
	}
}
