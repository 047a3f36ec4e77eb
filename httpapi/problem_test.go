package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestErrorTable drives every error kind out of the engine and checks the
// status, the problem body and the headers the caller sees.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	secret := "redis://user:hunter2@10.0.0.1"
	tests := []struct {
		name       string
		err        error
		status     int
		detail     string
		retryAfter string
	}{
		{"not found", workflow.Errorf(workflow.KindNotFound, "workflow x not found"), 404, "workflow x not found", ""},
		{"invalid", workflow.Errorf(workflow.KindInvalid, "maxSteps must be 1..100"), 422, "maxSteps must be 1..100", ""},
		{"conflict", workflow.Errorf(workflow.KindConflict, "a round is running"), 409, "a round is running", ""},
		{"unauthorized", workflow.Errorf(workflow.KindUnauthorized, "who are you"), 401, "who are you", ""},
		{"forbidden", workflow.Errorf(workflow.KindForbidden, "not yours"), 403, "not yours", ""},
		{"too many", workflow.Errorf(workflow.KindTooMany, "4 rounds running"), 429, "4 rounds running", "5"},
		{"unavailable", workflow.WrapKind(workflow.KindUnavailable, errors.New(secret), "store unavailable"), 503, "store unavailable", "5"},
		{"internal kind", workflow.WrapKind(workflow.KindInternal, errors.New(secret), "boom"), 500, "internal error; the gateway log has the details", ""},
		{"plain error", errors.New(secret), 500, "internal error; the gateway log has the details", ""},
		{"wrapped kind", errors.Join(errors.New("ctx"), workflow.Errorf(workflow.KindConflict, "busy")), 409, "busy", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, nil)
			env.engine.GetFn = func(string, string) (*workflow.Workflow, error) { return nil, tt.err }
			rec := env.do(t, http.MethodGet, "/api/v1/workflows/"+workflow.NewID(workflow.PrefixWorkflow), aliceToken, nil)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			p := problem(t, rec)
			if got, _ := p["detail"].(string); got != tt.detail {
				t.Errorf("detail = %q, want %q", got, tt.detail)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			if strings.Contains(rec.Body.String(), "hunter2") {
				t.Errorf("answer leaks the internal detail: %s", rec.Body)
			}
			if tt.status >= 500 && !strings.Contains(env.logs.String(), "hunter2") {
				t.Errorf("internal detail not logged; log: %s", env.logs)
			}
		})
	}
}

func TestStatusOfEveryKind(t *testing.T) {
	t.Parallel()
	for _, k := range []workflow.Kind{workflow.KindNotFound, workflow.KindInvalid, workflow.KindConflict,
		workflow.KindUnauthorized, workflow.KindForbidden, workflow.KindTooMany, workflow.KindUnavailable, workflow.KindInternal} {
		if _, ok := statusByKind[k]; !ok {
			t.Errorf("kind %q has no status in the table", k)
		}
	}
	if got := StatusOf(&workflow.Error{Kind: "new_kind"}); got != 500 {
		t.Errorf("unknown kind → %d, want 500", got)
	}
}

func TestUnknownRouteAndMethodAreProblems(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/nope", 404},
		{http.MethodGet, "/api/v1/nope", 404},
		{http.MethodPut, "/api/v1/workflows", 405},
	} {
		rec := env.do(t, tc.method, tc.path, aliceToken, nil)
		if rec.Code != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		problem(t, rec)
	}
}

func TestPanicBecomesProblem(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	env.engine.GetFn = func(string, string) (*workflow.Workflow, error) { panic("kaboom") }
	rec := env.do(t, http.MethodGet, "/api/v1/workflows/"+workflow.NewID(workflow.PrefixWorkflow), aliceToken, nil)
	if rec.Code != 500 {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	p := problem(t, rec)
	if strings.Contains(p["detail"].(string), "kaboom") {
		t.Errorf("panic value leaked to caller: %v", p["detail"])
	}
	if !strings.Contains(env.logs.String(), "kaboom") {
		t.Errorf("panic not logged: %s", env.logs)
	}
}

// TestMalformedQueryIsRejected: url.Values drops a pair it cannot decode,
// so "?limit=%ZZ" would silently list with the default limit and
// "?bogus=%ZZ" would slip past the unknown-parameter check. Both are 422,
// as any other invalid query parameter.
func TestMalformedQueryIsRejected(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for _, path := range []string{
		"/api/v1/workflows?limit=%ZZ",
		"/api/v1/workflows?bogus=%ZZ&limit=1",
		"/api/v1/workflows/wf_x/messages?after=1%",
	} {
		rec := env.do(t, http.MethodGet, path, aliceToken, nil)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("GET %s = %d, want 422: %s", path, rec.Code, rec.Body)
			continue
		}
		if p := problem(t, rec); !strings.Contains(fmt.Sprint(p), "query string") {
			t.Errorf("GET %s: problem %v does not name the query string", path, p)
		}
	}
}
