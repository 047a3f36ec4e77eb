package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

const forkPath = "/api/v1/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV/fork"

// The body reaches the engine as a ForkRequest (the selection field by
// field, the parameters as sent) and the fork is answered 201 with its
// forkedFrom and Location.
func TestForkAnswersTheNewWorkflow(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	var got engine.ForkRequest
	env.engine.ForkFn = func(userID, id string, req engine.ForkRequest) (*workflow.Workflow, error) {
		if userID != "alice" || id != "wf_01ARZ3NDEKTSV4RRFFQ69G5FAV" {
			t.Errorf("Fork(%q, %q)", userID, id)
		}
		got = req
		return &workflow.Workflow{ID: "wf_fork", UserID: userID, Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 1, Step: 4,
			ForkedFrom: workflow.ForkOrigin{WorkflowID: id, Round: 1, Step: 4}}, nil
	}
	rec := env.do(t, "POST", forkPath, aliceToken, map[string]any{
		"round": 1, "step": 4,
		"selection": map[string]any{"action": "crm.create", "actionObjective": "o", "requiredInputDocuments": []string{"docList:x"},
			"requiredConnection": "crm", "parametersContext": "c",
			"parametersSchema": map[string]any{"fields": []any{map[string]any{"name": "title", "type": "string", "required": true, "description": "d"}}}},
		"parameters": map[string]any{"title": "t"},
	})
	if rec.Code != 201 || rec.Header().Get("Location") != "/api/v1/workflows/wf_fork" {
		t.Fatalf("status %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	want := engine.ForkRequest{Round: 1, Step: 4, Parameters: map[string]any{"title": "t"}, Selection: &workflow.Selection{
		Action: "crm.create", ActionObjective: "o", RequiredInputDocuments: []string{"docList:x"}, RequiredConnection: "crm",
		ParametersContext: "c", ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "title", Type: "string", Required: true, Description: "d"}}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ForkRequest (-want +got):\n%s", diff)
	}
	var view struct {
		ID         string
		ForkedFrom *workflow.ForkOrigin
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &view); err != nil {
		t.Fatal(err)
	}
	if view.ID != "wf_fork" || view.ForkedFrom == nil || *view.ForkedFrom != (workflow.ForkOrigin{WorkflowID: "wf_01ARZ3NDEKTSV4RRFFQ69G5FAV", Round: 1, Step: 4}) {
		t.Errorf("view %+v", view)
	}
}

// Refusals: each problem of a refused edit is one error at the edited
// field; a step never reached is 422, another user's workflow 404, a
// request without round/step 422 before the engine.
func TestForkRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		body      map[string]any
		err       error
		code      int
		locations []string
	}{
		{"refused selection", map[string]any{"round": 1, "step": 4, "selection": map[string]any{"action": "x.y"}},
			&workflow.Error{Kind: workflow.KindInvalid, Message: "m", Err: &engine.ForkProblems{Field: "selection", Lines: []string{"a", "b"}}},
			422, []string{"body.selection", "body.selection"}},
		{"refused parameters", map[string]any{"round": 1, "step": 4, "parameters": map[string]any{"k": 1}},
			&workflow.Error{Kind: workflow.KindInvalid, Message: "m", Err: &engine.ForkProblems{Field: "parameters", Lines: []string{"/k: want string"}}},
			422, []string{"body.parameters"}},
		{"a step never reached", map[string]any{"round": 1, "step": 40}, workflow.Errorf(workflow.KindInvalid, "round 1 has no step 40"), 422, nil},
		{"another user's workflow", map[string]any{"round": 1, "step": 4}, workflow.NoWorkflow("wf_01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404, nil},
		{"no step", map[string]any{"round": 1}, nil, 422, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, nil)
			if tc.err != nil {
				env.engine.ForkFn = func(string, string, engine.ForkRequest) (*workflow.Workflow, error) { return nil, tc.err }
			}
			rec := env.do(t, "POST", forkPath, aliceToken, tc.body)
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			if tc.locations == nil {
				return
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
			if diff := cmp.Diff(tc.locations, got); diff != "" {
				t.Errorf("locations (-want +got):\n%s", diff)
			}
		})
	}
}

// A selection's field may be given by name alone (DESIGN §10.1): its type
// comes from the action's schema, so the route does not require "type"
// and the field reaches the engine with none, as a Stage 1 reply's would.
func TestForkSelectionFieldByName(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	var got engine.ForkRequest
	env.engine.ForkFn = func(userID, id string, req engine.ForkRequest) (*workflow.Workflow, error) {
		got = req
		return &workflow.Workflow{ID: "wf_fork", UserID: userID, Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 1, Step: 2}, nil
	}
	rec := env.do(t, "POST", forkPath, aliceToken, map[string]any{
		"round": 1, "step": 2,
		"selection": map[string]any{"action": "crm.create",
			"parametersSchema": map[string]any{"fields": []any{map[string]any{"name": "title"}}}},
	})
	if rec.Code != 201 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if got.Selection == nil {
		t.Fatal("no selection reached the engine")
	}
	want := []workflow.FieldSpec{{Name: "title"}}
	if diff := cmp.Diff(want, got.Selection.ParametersSchema.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
