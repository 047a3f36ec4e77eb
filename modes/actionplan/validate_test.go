package actionplan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/workflow"
)

// upload is a workflow's first user message with one document.
func upload() []workflow.Message {
	return []workflow.Message{{
		ID: "msg_u1", WorkflowID: "wf_1", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "see the file",
		DocumentsLabel: "round1_user_context",
		Documents: []workflow.Document{{ID: "doc_1", WorkflowID: "wf_1", MessageID: "msg_u1", Name: "a.txt",
			MimeType: "text/plain", Size: 3}},
	}}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	text := func(s string) map[string]any { return map[string]any{"text": s} }
	echoDraft := func(s string, docs ...string) actionplan.Draft {
		return actionplan.Draft{Action: enginetest.Echo, Parameters: text(s), Documents: docs}
	}
	tests := []struct {
		name      string
		drafts    []actionplan.Draft
		maxSteps  int
		wantSteps []string // actions kept
		dropped   map[int]string
		truncated int
		conns     []workflow.Connection // the user's connections; nil: crm (http)
	}{
		{name: "valid steps kept in order",
			drafts:    []actionplan.Draft{echoDraft("a"), {Action: workflow.CompleteAction, Parameters: map[string]any{"message": "hi"}}},
			wantSteps: []string{enginetest.Echo, workflow.CompleteAction}},
		{name: "unknown action",
			drafts:    []actionplan.Draft{{Action: "nope.nope", Parameters: map[string]any{}}, echoDraft("a")},
			wantSteps: []string{enginetest.Echo}, dropped: map[int]string{0: `action "nope.nope" is not registered`}},
		{name: "missing required parameter",
			drafts:    []actionplan.Draft{{Action: enginetest.Echo, Parameters: map[string]any{}}},
			wantSteps: []string{}, dropped: map[int]string{0: `missing property "text"`}},
		{name: "schema-invalid parameter",
			drafts:    []actionplan.Draft{{Action: enginetest.Echo, Parameters: map[string]any{"text": 3.0}}},
			wantSteps: []string{}, dropped: map[int]string{0: "/text: want string"}},
		{name: "forbidden parameter",
			drafts:    []actionplan.Draft{{Action: enginetest.Echo, Parameters: map[string]any{"text": "a", "history": "x"}}},
			wantSteps: []string{}, dropped: map[int]string{0: "parameters.history: forbidden key"}},
		{name: "malformed draft",
			drafts:    []actionplan.Draft{{Problem: "the step must be an object, got a number"}},
			wantSteps: []string{}, dropped: map[int]string{0: "the step must be an object"}},
		{name: "resolvable references of every form",
			drafts:    []actionplan.Draft{echoDraft("a", "docList:msg_u1:round1_user_context", "docList:round1_user_context", "docItem:doc_1:a.txt", "docItem:doc_1")},
			wantSteps: []string{enginetest.Echo}},
		{name: "unresolvable references",
			drafts:    []actionplan.Draft{echoDraft("a", "docItem:doc_2"), echoDraft("b", "docList:msg_u1:wrong"), echoDraft("c", "docItem:doc_1:b.txt"), echoDraft("d", "file.txt")},
			wantSteps: []string{},
			dropped: map[int]string{0: "no document of this workflow has that id", 1: `has label "round1_user_context", not "wrong"`,
				2: `is named "a.txt", not "b.txt"`, 3: `document reference "file.txt"`}},
		{name: "earlier result label accepted, later or dropped ones not",
			drafts: []actionplan.Draft{
				echoDraft("uses later", "docList:later"),
				{Action: enginetest.Echo, Parameters: text("a"), ResultLabel: "first"},
				echoDraft("uses first", "docList:first"),
				{Action: enginetest.Echo, Parameters: map[string]any{}, ResultLabel: "dropped"},
				echoDraft("uses dropped", "docList:dropped"),
				{Action: enginetest.Echo, Parameters: text("b"), ResultLabel: "later"},
			},
			wantSteps: []string{enginetest.Echo, enginetest.Echo, enginetest.Echo},
			dropped:   map[int]string{0: `"docList:later": no message`, 3: "missing property", 4: `"docList:dropped": no message`}},
		{name: "connections",
			drafts: []actionplan.Draft{
				{Action: enginetest.Remote, Parameters: map[string]any{}},
				{Action: enginetest.Remote, Parameters: map[string]any{}, Connection: "erp"},
				{Action: enginetest.Remote, Parameters: map[string]any{}, Connection: "crm"},
			},
			wantSteps: []string{enginetest.Remote},
			dropped:   map[int]string{0: "needs a connection", 1: `connection "erp" is not one of yours (available: crm)`}},
		{name: "connection of the wrong kind",
			drafts: []actionplan.Draft{
				{Action: enginetest.Remote, Parameters: map[string]any{}, Connection: "ledger"},
				{Action: enginetest.Remote, Parameters: map[string]any{}, Connection: "crm"},
			},
			conns:     []workflow.Connection{{Label: "crm", Kind: "http"}, {Label: "ledger", Kind: "sql"}},
			wantSteps: []string{enginetest.Remote},
			dropped:   map[int]string{0: `connection "ledger" is of kind "sql", but action "` + enginetest.Remote + `" uses kind "http": set "parameters.connectionReference" to one of: crm`}},
		{name: "complete needs a message and ends the plan",
			drafts: []actionplan.Draft{
				{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "  "}},
				{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "bye"}},
				echoDraft("late"),
			},
			wantSteps: []string{workflow.CompleteAction},
			dropped:   map[int]string{0: "must be a non-empty string", 2: "comes after workflow.complete"}},
		{name: "truncated to max steps after validation",
			drafts:    []actionplan.Draft{{Action: "x.y"}, echoDraft("1"), echoDraft("2"), echoDraft("3"), echoDraft("4")},
			maxSteps:  2,
			wantSteps: []string{enginetest.Echo, enginetest.Echo}, dropped: map[int]string{0: "not registered"}, truncated: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := actionplan.Env{Registry: enginetest.NewRegistry(), Messages: upload(),
				Connections: []workflow.Connection{{Label: "crm", Kind: "http"}}, MaxSteps: 10}
			if tc.maxSteps > 0 {
				env.MaxSteps = tc.maxSteps
			}
			if tc.conns != nil {
				env.Connections = tc.conns
			}
			got := actionplan.Validate(tc.drafts, env)
			actions := []string{}
			for _, s := range got.Steps {
				actions = append(actions, s.Action)
			}
			if diff := cmp.Diff(tc.wantSteps, actions); diff != "" {
				t.Errorf("kept actions (-want +got):\n%s", diff)
			}
			if len(got.Dropped) != len(tc.dropped) {
				t.Errorf("dropped = %+v, want %d", got.Dropped, len(tc.dropped))
			}
			for _, d := range got.Dropped {
				if want, ok := tc.dropped[d.Index]; !ok || !strings.Contains(d.Reason, want) {
					t.Errorf("step %d dropped for %q, want a reason containing %q", d.Index, d.Reason, want)
				}
			}
			if got.Truncated != tc.truncated {
				t.Errorf("truncated = %d, want %d", got.Truncated, tc.truncated)
			}
		})
	}
}

func TestValidateCleansResultLabels(t *testing.T) {
	t.Parallel()
	env := actionplan.Env{Registry: enginetest.NewRegistry(), MaxSteps: 5}
	got := actionplan.Validate([]actionplan.Draft{
		{Action: enginetest.Echo, Parameters: map[string]any{"text": "a"}, ResultLabel: " my label:v2\n"},
		{Action: enginetest.Echo, Parameters: map[string]any{"text": "b"}, ResultLabel: strings.Repeat("é", 150)},
		{Action: enginetest.Echo, Parameters: map[string]any{"text": "c"}, Documents: []string{"docList:my_label_v2"}},
	}, env)
	if len(got.Steps) != 3 {
		t.Fatalf("steps = %+v, dropped %+v; want all 3", got.Steps, got.Dropped)
	}
	if l := got.Steps[0].ResultLabel; l != "my_label_v2" {
		t.Errorf("label = %q, want my_label_v2", l)
	}
	if l := got.Steps[1].ResultLabel; len(l) > 200 || !strings.HasPrefix(l, "éé") || strings.ContainsRune(l, '\uFFFD') {
		t.Errorf("long label = %q (%d bytes), want at most 200 bytes of whole runes", l, len(l))
	}
	if _, err := workflow.ParseReference("docList:" + got.Steps[1].ResultLabel); err != nil {
		t.Errorf("cleaned label is not referenceable: %v", err)
	}
}

func TestValidateIgnoresStepsBeyondTheCap(t *testing.T) {
	t.Parallel()
	drafts := make([]actionplan.Draft, actionplan.MaxPlanSteps+50)
	for i := range drafts {
		drafts[i] = actionplan.Draft{Action: "no.such", Parameters: map[string]any{}}
	}
	drafts[len(drafts)-1] = actionplan.Draft{Action: enginetest.Echo, Parameters: map[string]any{"text": "late"}}
	got := actionplan.Validate(drafts, actionplan.Env{Registry: enginetest.NewRegistry(), MaxSteps: 100})
	if len(got.Steps) != 0 || len(got.Dropped) != actionplan.MaxPlanSteps || got.Ignored != 50 {
		t.Errorf("steps %d, dropped %d, ignored %d; want 0, %d, 50", len(got.Steps), len(got.Dropped), got.Ignored, actionplan.MaxPlanSteps)
	}
}
