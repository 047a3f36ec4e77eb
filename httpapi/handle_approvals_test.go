package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// Each problem line of invalid edited parameters becomes one error located
// at the parameter it names, whether the line is a schema line ("/a/b:")
// or one of the Stage 2 rule ("parameters.k:").
func TestInvalidEditNamesEachParameter(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	lines := []string{
		"parameters.documentList: forbidden key: documents, connections and history are attached by the engine, never passed as parameters",
		"parameters.format: not a field to fill: give only the fields title, body",
		"/title/0: want string",
		"/: missing property \"title\"",
	}
	env.engine.DecideFn = func(string, string, string, workflow.Decision) (*workflow.Workflow, error) {
		return nil, &workflow.Error{Kind: workflow.KindInvalid, Message: "invalid", Err: &engine.ParameterProblems{Lines: lines}}
	}
	rec := env.do(t, "POST", "/api/v1/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV/approvals/apr_1", aliceToken,
		map[string]any{"decision": "approve", "parameters": map[string]any{"format": "md"}})
	if rec.Code != 422 {
		t.Fatalf("status = %d, want 422: %s", rec.Code, rec.Body)
	}
	var p struct {
		Errors []struct{ Location, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Errors {
		got = append(got, e.Location)
	}
	want := []string{"body.parameters.documentList", "body.parameters.format", "body.parameters.title.0", "body.parameters"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
}
