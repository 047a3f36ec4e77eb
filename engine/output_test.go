package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// Run.Generate passes the schema to the model, records the mode the model
// answered in, and maps a native reply with FromNative before Check — but
// never a reply that came in json_object or text mode.
func TestGenerateRecordsOutputModeAndMapsNativeReplies(t *testing.T) {
	t.Parallel()
	schema := &workflow.OutputSchema{Name: "stage1_selection", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}
	for _, tt := range []struct {
		mode, want workflow.OutputMode
		checked    string
	}{
		{workflow.OutputTool, workflow.OutputTool, "mapped:{}"},
		{workflow.OutputJSONSchema, workflow.OutputJSONSchema, "mapped:{}"},
		{workflow.OutputJSONObject, workflow.OutputJSONObject, "{}"},
		{"", workflow.OutputText, "{}"}, // a model that does not say is recorded as text
	} {
		t.Run(string(tt.want), func(t *testing.T) {
			t.Parallel()
			store := memstore.New()
			var sent *workflow.OutputSchema
			model := workflow.ModelFunc(func(_ context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
				sent = req.Output
				return workflow.ModelResponse{Text: "{}", OutputMode: tt.mode}, nil
			})
			var checked string
			step := func(ctx context.Context, run workflow.Run) error {
				_, err := run.Generate(ctx, workflow.ModelCall{
					Stage: workflow.StageOne, Attempt: 1, JSON: true, Output: schema,
					FromNative: func(reply string) string { return "mapped:" + reply },
					Check: func(reply string) (json.RawMessage, string) {
						checked = reply
						return json.RawMessage(`{}`), ""
					},
				})
				if err != nil {
					return err
				}
				return run.CommitStep(ctx, workflow.StepResult{
					Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
					End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
				})
			}
			e := newEngine(t, engine.Config{}, store, model, step)
			wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := e.Wait(ctx, wf.ID); err != nil {
				t.Fatal(err)
			}
			if sent != schema {
				t.Errorf("model got Output %v, want the call's schema", sent)
			}
			if checked != tt.checked {
				t.Errorf("Check read %q, want %q", checked, tt.checked)
			}
			traces, err := store.Traces(ctx, wf.ID)
			if err != nil || len(traces) != 1 {
				t.Fatalf("traces = %v, %v", traces, err)
			}
			if traces[0].OutputMode != tt.want || traces[0].Response != "{}" {
				t.Errorf("trace outputMode %q response %q, want %q and the raw reply", traces[0].OutputMode, traces[0].Response, tt.want)
			}
			raw, _ := json.Marshal(traces[0])
			if !strings.Contains(string(raw), `"outputMode":"`+string(tt.want)+`"`) {
				t.Errorf("trace JSON %s lacks outputMode", raw)
			}
		})
	}
}

func TestOutputModeNativeAndValid(t *testing.T) {
	t.Parallel()
	for _, m := range []workflow.OutputMode{workflow.OutputTool, workflow.OutputJSONSchema, workflow.OutputJSONObject, workflow.OutputText} {
		if !m.Valid() {
			t.Errorf("%q not valid", m)
		}
		if got, want := m.Native(), m == workflow.OutputTool || m == workflow.OutputJSONSchema; got != want {
			t.Errorf("%q.Native() = %v", m, got)
		}
	}
	if workflow.OutputMode("xml").Valid() || workflow.OutputMode("").Valid() {
		t.Error("unknown modes must not be valid")
	}
}
