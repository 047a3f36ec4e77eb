package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/workflow"
)

// ticketStep is the Stage 1 reply choosing action with a context that
// gives the ticket id INC-20931.
func ticketStep(action string) string {
	b, _ := json.Marshal(map[string]any{
		"action": action, "actionObjective": "Close the customer's printer ticket.", "learnings": []string{},
		"requiredInputDocuments": []string{}, "requiredConnection": nil,
		"parametersContext": "The printer ticket is INC-20931; the customer confirmed the fix.",
		"parametersSchema":  map[string]any{"fields": []map[string]any{{"name": "ticketId"}}},
	})
	return string(b)
}

// DESIGN §10.4: every Stage 2 trace lists the values that appear nowhere
// in what Stage 2 was shown; stage2.requireGrounded turns them into a
// rejection with feedback naming the field (write: for actions that are
// not read-only; all: for every action), retried once like any Stage 2
// problem.
func TestRequireGrounded(t *testing.T) {
	t.Parallel()
	const invented, given = "INC-40000", "INC-20931"
	tests := []struct {
		name    string
		setting react.Grounded
		effect  workflow.Effect
		// call, when set, is the effect the registry gives the call
		// (as actions' does for http.request by its method).
		call   workflow.Effect
		reject bool
	}{
		{"never traces a write", react.GroundedNever, workflow.EffectWrite, "", false},
		{"write rejects a write", react.GroundedWrite, workflow.EffectWrite, "", true},
		{"write lets a read run", react.GroundedWrite, workflow.EffectRead, "", false},
		{"write judges the call", react.GroundedWrite, workflow.EffectWrite, workflow.EffectRead, false},
		{"write judges the call of a read action", react.GroundedWrite, workflow.EffectRead, workflow.EffectWrite, true},
		{"all rejects a read", react.GroundedAll, workflow.EffectRead, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const action = "tickets.close"
			reg := enginetest.NewRegistry()
			reg.Specs = append(reg.Specs, workflow.ActionSpec{Name: action, Description: "Closes a ticket.", Effect: tt.effect,
				Documents: workflow.DocumentsNone, Parameters: json.RawMessage(`{"type":"object","properties":{"ticketId":{"type":"string"}},"required":["ticketId"],"additionalProperties":false}`)})
			reg.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
				return workflow.ActionResult{Text: "closed"}, nil
			}
			script := []string{ticketStep(action), enginetest.Params(map[string]any{"ticketId": invented})}
			if tt.reject {
				script = append(script, enginetest.Params(map[string]any{"ticketId": given}))
			}
			store := newStore()
			model := scripted.New(replies(script, enginetest.Completes("The ticket is closed."))...)
			mode := react.New(newBuilder(t), react.RequireGrounded(tt.setting))
			var registry workflow.Registry = reg
			if tt.call != "" {
				registry = callEffectRegistry{reg, tt.call}
			}
			e := enginetest.StartEngine(t, testConfig("a"), store, model, registry, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: mode})
			wf := wait(t, e, create(t, e, "close my printer ticket", 5).ID)
			if wf.Status != workflow.StatusCompleted {
				t.Fatalf("round ended %s/%s (%s)", wf.Status, wf.StopReason, wf.Error)
			}

			want, ran := []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageOne, workflow.StageTwo}, invented
			if tt.reject {
				want, ran = []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageTwo, workflow.StageOne, workflow.StageTwo}, given
			}
			calls := model.Calls()
			if diff := cmp.Diff(want, stages(calls)); diff != "" {
				t.Errorf("model calls (-want +got):\n%s", diff)
			}
			if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["ticketId"] != ran {
				t.Errorf("executions = %+v, want one with ticketId %s", ex, ran)
			}
			if tt.reject {
				if retry := lastMessage(calls[2].Messages); !strings.Contains(retry, "parameters.ticketId: this value appears neither") {
					t.Errorf("retry prompt lacks feedback naming ticketId:\n%s", retry)
				}
			}

			var s2 []workflow.Trace
			for _, tr := range enginetest.Traces(t, store, wf.ID) {
				if tr.Stage == workflow.StageTwo && tr.Step == 1 {
					s2 = append(s2, tr)
				}
			}
			if len(s2) == 0 || !cmp.Equal(s2[0].Ungrounded, []string{"ticketId"}) {
				t.Fatalf("first Stage 2 trace's ungrounded = %v, want [ticketId]", s2)
			}
			if got := strings.Contains(s2[0].Error, "parameters.ticketId"); got != tt.reject {
				t.Errorf("first Stage 2 trace's error %q names ticketId: %v, want %v", s2[0].Error, got, tt.reject)
			}
			if tt.reject && (len(s2) != 2 || s2[1].Ungrounded != nil || s2[1].Error != "") {
				t.Errorf("the retry's trace = %+v, want accepted and grounded", s2[1:])
			}
		})
	}
}

// callEffectRegistry gives every call the effect effect.
type callEffectRegistry struct {
	*enginetest.Registry
	effect workflow.Effect
}

func (r callEffectRegistry) EffectOf(string, map[string]any) workflow.Effect { return r.effect }

// lastMessage is the content of the last message of a prompt.
func lastMessage(msgs []workflow.PromptMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Content
}

func TestParseGrounded(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]react.Grounded{"": react.GroundedNever, "never": react.GroundedNever, "write": react.GroundedWrite, "all": react.GroundedAll} {
		if got, err := react.ParseGrounded(in); err != nil || got != want {
			t.Errorf("ParseGrounded(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := react.ParseGrounded("writes"); err == nil || !strings.Contains(err.Error(), "never, write, all") {
		t.Errorf("ParseGrounded(writes) error = %v, want the settings listed", err)
	}
}
