package react_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// cutModel answers from a script and reports the calls numbered in cut (from
// 0) as stopped at the token limit after 300 tokens; it records each call's
// maxTokens.
type cutModel struct {
	script *scripted.Model
	cut    map[int]bool

	mu        sync.Mutex
	maxTokens []int
}

func (m *cutModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	m.mu.Lock()
	n := len(m.maxTokens)
	m.maxTokens = append(m.maxTokens, req.MaxTokens)
	m.mu.Unlock()
	resp, err := m.script.Generate(ctx, req)
	if err == nil && m.cut[n] {
		resp.Truncated, resp.StopReason, resp.CompletionTokens = true, "length", 300
	}
	return resp, err
}

func (m *cutModel) sent() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.maxTokens...)
}

// A reply cut at the token limit is never parsed — even one that would
// parse — but rejected with feedback naming the cause and retried with a
// larger maxTokens, in Stage 1 and in Stage 2.
func TestTruncatedReplyIsRetriedWithMoreTokens(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	script := scripted.New(
		enginetest.Select(enginetest.Echo, "echo", nil, "", "text"), // cut: not read although valid
		enginetest.Select(enginetest.Echo, "echo", nil, "", "text"),
		enginetest.Params(map[string]any{"text": "cut"}), // cut: must not run
		enginetest.Params(map[string]any{"text": "whole"}),
		enginetest.Completes("ok")[0], enginetest.Completes("ok")[1],
	)
	model := &cutModel{script: script, cut: map[int]bool{0: true, 2: true}}
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", wf.Status, wf.Error)
	}
	calls := script.Calls()
	if diff := cmp.Diff([]workflow.Stage{s1, s1, s2, s2, s1, s2}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1024, 0, 1024, 0, 0}, model.sent()); diff != "" {
		t.Errorf("maxTokens per call (-want +got):\n%s", diff)
	}
	for _, i := range []int{1, 3} {
		if p := calls[i].Text(); !strings.Contains(p, `cut off at the token limit (stop reason "length" after 300 tokens)`) {
			t.Errorf("call %d lacks the truncation feedback:\n%s", i, p)
		}
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "whole" {
		t.Errorf("executions = %+v, want only the whole reply's parameters", ex)
	}
	traces, err := store.Traces(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rejected int
	for _, tr := range traces {
		if strings.Contains(tr.Error, "cut off at the token limit") {
			rejected++
			if len(tr.Parsed) != 0 {
				t.Errorf("a cut reply was parsed: %s", tr.Parsed)
			}
		}
	}
	if rejected != 2 {
		t.Errorf("traces naming the cut = %d, want 2", rejected)
	}
}
