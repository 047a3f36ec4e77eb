package actions

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// ai.process reports its model call in ActionResult.ModelCalls — prompt as
// sent, raw answer, usage — whether the action succeeds or fails.
func TestAIProcessReportsItsModelCall(t *testing.T) {
	t.Parallel()
	usage := func(text string, err error) *fakeModel {
		return &fakeModel{reply: func(workflow.ModelRequest) (workflow.ModelResponse, error) {
			if err != nil {
				return workflow.ModelResponse{}, err
			}
			return workflow.ModelResponse{Text: text, Model: "fake-1", PromptTokens: 120, CompletionTokens: 7}, nil
		}}
	}
	tests := []struct {
		name      string
		model     *fakeModel
		wantErr   workflow.Kind
		wantCall  workflow.ActionModelCall // Prompt is checked against the request
		wantError string                   // substring of the call's Error
	}{
		{
			name:     "answer used",
			model:    usage("  Revenue grew.  ", nil),
			wantCall: workflow.ActionModelCall{Template: AIProcessAction, Response: "  Revenue grew.  ", Model: "fake-1", PromptTokens: 120, CompletionTokens: 7},
		},
		{
			name:      "model unavailable",
			model:     usage("", workflow.WrapKind(workflow.KindUnavailable, errors.New("503 from upstream"), "the model provider is overloaded")),
			wantErr:   workflow.KindUnavailable,
			wantCall:  workflow.ActionModelCall{Template: AIProcessAction},
			wantError: "503 from upstream",
		},
		{
			name:      "empty answer",
			model:     usage(" \n ", nil),
			wantErr:   workflow.KindUnavailable,
			wantCall:  workflow.ActionModelCall{Template: AIProcessAction, Response: " \n ", Model: "fake-1", PromptTokens: 120, CompletionTokens: 7},
			wantError: "empty answer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := mustNew(t, Config{}, tt.model)
			res, err := r.Execute(context.Background(), call(AIProcessAction, map[string]any{"aiPrompt": "Summarise."},
				doc("notes.txt", "text/plain", []byte("Revenue grew by 12 percent."))))
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if tt.wantErr != "" {
				wantKind(t, err, tt.wantErr)
				if res.Text != "" || len(res.Documents) != 0 {
					t.Errorf("a failed action returned text %q and %d documents", res.Text, len(res.Documents))
				}
			}
			reqs := tt.model.calls()
			if len(reqs) != 1 || len(res.ModelCalls) != 1 {
				t.Fatalf("%d requests, %d reported calls; want 1 and 1", len(reqs), len(res.ModelCalls))
			}
			got := res.ModelCalls[0]
			if diff := cmp.Diff(reqs[0].Messages, got.Prompt); diff != "" {
				t.Errorf("reported prompt differs from the one sent (-sent +reported):\n%s", diff)
			}
			if !strings.Contains(got.Prompt[1].Content, "Summarise.") || !strings.Contains(got.Prompt[1].Content, "Revenue grew by 12 percent.") {
				t.Errorf("prompt lacks the instruction or the document:\n%s", got.Prompt[1].Content)
			}
			if got.LatencyMs < 0 {
				t.Errorf("latency %d ms", got.LatencyMs)
			}
			if (got.Error == "") != (tt.wantError == "") || !strings.Contains(got.Error, tt.wantError) {
				t.Errorf("call error = %q, want it to contain %q", got.Error, tt.wantError)
			}
			got.Prompt, got.LatencyMs, got.Error = nil, 0, ""
			if diff := cmp.Diff(tt.wantCall, got); diff != "" {
				t.Errorf("reported call (-want +got):\n%s", diff)
			}
		})
	}
}

// An action that fails before calling the model reports no call.
func TestFailedActionWithoutModelCallReportsNone(t *testing.T) {
	t.Parallel()
	model := answering("ok")
	r := mustNew(t, Config{}, model)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := r.Execute(ctx, call(AIProcessAction, map[string]any{"aiPrompt": "x"}))
	wantKind(t, err, workflow.KindUnavailable)
	if len(res.ModelCalls) != 0 || len(model.calls()) != 0 {
		t.Errorf("reported %d calls, model saw %d; want none", len(res.ModelCalls), len(model.calls()))
	}
}

// A secret that reaches the model through a document, or comes back in its
// answer, is scrubbed from the reported call as from the result.
func TestAIProcessModelCallIsScrubbed(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(strings.NewReader(`
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: http://127.0.0.1:1/api
    description: Alice's CRM
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
`), env(map[string]string{"CRM_TOKEN": connMarker}))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	for _, fail := range []bool{false, true} {
		model := &fakeModel{reply: func(req workflow.ModelRequest) (workflow.ModelResponse, error) {
			if fail {
				return workflow.ModelResponse{}, workflow.Errorf(workflow.KindUnavailable, "refused token %s", connMarker)
			}
			return workflow.ModelResponse{Text: "the token is " + connMarker}, nil
		}}
		r := mustNew(t, cfg, model)
		res, _ := r.Execute(context.Background(), call(AIProcessAction, map[string]any{"aiPrompt": "find the token"},
			doc("leak.txt", "text/plain", []byte("token: "+connMarker))))
		if !strings.Contains(model.calls()[0].Messages[1].Content, connMarker) {
			t.Fatalf("fail=%v: the test document did not reach the model", fail)
		}
		if len(res.ModelCalls) != 1 {
			t.Fatalf("fail=%v: %d calls reported, want 1", fail, len(res.ModelCalls))
		}
		c := res.ModelCalls[0]
		for where, s := range map[string]string{"prompt": c.Prompt[1].Content, "response": c.Response, "error": c.Error} {
			if strings.Contains(s, connMarker) {
				t.Errorf("fail=%v: the reported call's %s carries the secret: %q", fail, where, s)
			}
		}
		if !strings.Contains(c.Prompt[1].Content, "token: "+redact.Redacted) {
			t.Errorf("fail=%v: the secret was dropped instead of redact.Redacted: %q", fail, c.Prompt[1].Content)
		}
	}
}

// TestAIProcessAsksTheModelGuard (issue 45 item 4): ai.process puts its
// model call to ctx's guard: refused (the user's budget is spent), the
// model is not called and the budget error is the action's; allowed, the
// guard is told what the call used.
func TestAIProcessAsksTheModelGuard(t *testing.T) {
	t.Parallel()
	var made int
	model := &fakeModel{reply: func(workflow.ModelRequest) (workflow.ModelResponse, error) {
		made++
		return workflow.ModelResponse{Text: "Revenue grew.", Model: "fake-1", PromptTokens: 120, CompletionTokens: 7}, nil
	}}
	r := mustNew(t, Config{}, model)
	spent := &workflow.BudgetError{What: "the daily budget of 2500 tokens"}
	var settled []workflow.ModelResponse
	guard := func(spent error) workflow.ModelGuard {
		return func(_ context.Context, req workflow.ModelRequest) (func(workflow.ModelResponse), error) {
			if req.Stage != workflow.StageAction {
				t.Errorf("guarded a call of stage %s", req.Stage)
			}
			if spent != nil {
				return nil, spent
			}
			return func(resp workflow.ModelResponse) { settled = append(settled, resp) }, nil
		}
	}
	in := call(AIProcessAction, map[string]any{"aiPrompt": "Summarise."})
	_, err := r.Execute(workflow.WithModelGuard(context.Background(), guard(spent)), in)
	var be *workflow.BudgetError
	if !errors.As(err, &be) || made != 0 {
		t.Errorf("with the budget spent: %v after %d model calls, want the budget error and no call", err, made)
	}
	if _, err := r.Execute(workflow.WithModelGuard(context.Background(), guard(nil)), in); err != nil {
		t.Fatal(err)
	}
	if made != 1 || len(settled) != 1 || settled[0].PromptTokens != 120 || settled[0].CompletionTokens != 7 {
		t.Errorf("allowed: %d calls, guard told %+v; want one call settled with its usage", made, settled)
	}
}
