package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/workflow"
)

// streamingModel streams each scripted reply to the request's Stream. With
// hold, a Stage 1 reply stops after its head (the four keys before
// "learnings") until a Stage 2 call has arrived: a round that goes on
// proves Stage 2 started while Stage 1's reply was still streaming (a
// Stage 2 that waited for Stage 1's end would never come; the bounded
// wait then marks missed instead of hanging the test).
type streamingModel struct {
	script *scripted.Model
	hold   bool
	stage2 chan struct{}
	missed atomic.Bool
}

func newStreamingModel(hold bool, stage1, stage2 []string) *streamingModel {
	return &streamingModel{script: byStage(stage1, stage2), hold: hold, stage2: make(chan struct{}, 8)}
}

func (s *streamingModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	if req.Stage == workflow.StageOne {
		for len(s.stage2) > 0 { // a later Stage 2 of an earlier step
			<-s.stage2
		}
	}
	if req.Stage == workflow.StageTwo {
		s.stage2 <- struct{}{}
	}
	resp, err := s.script.Generate(ctx, req)
	if err != nil || req.Stream == nil {
		return resp, err
	}
	head := len(resp.Text)
	if i := strings.Index(resp.Text, `"learnings"`); i > 0 && req.Stage == workflow.StageOne {
		head = i
	}
	streamPieces(req.Stream, resp.Text[:head])
	if s.hold && head < len(resp.Text) {
		select {
		case <-s.stage2:
		case <-ctx.Done():
			return workflow.ModelResponse{}, ctx.Err()
		case <-time.After(10 * time.Second):
			s.missed.Store(true)
		}
	}
	streamPieces(req.Stream, resp.Text[head:])
	return resp, nil
}

// streamPieces hands text over in pieces of 5 bytes (a piece may split a
// UTF-8 sequence, as a provider's may not: these texts are ASCII).
func streamPieces(stream func(string), text string) {
	for len(text) > 0 {
		n := min(5, len(text))
		stream(text[:n])
		text = text[n:]
	}
}

// byStage scripts Stage 1 and Stage 2 replies apart (an early Stage 2 call
// may come before its Stage 1 call has ended); a Stage 2 reply "" blocks
// until the call is cancelled.
func byStage(stage1, stage2 []string) *scripted.Model {
	var mu sync.Mutex
	next := map[workflow.Stage]int{}
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		list := stage1
		if req.Stage == workflow.StageTwo {
			list = stage2
		}
		i := next[req.Stage]
		next[req.Stage]++
		if i >= len(list) {
			return "", workflow.Errorf(workflow.KindInternal, "no %s reply %d", req.Stage, i)
		}
		if list[i] == "" {
			return "", scripted.ErrBlock
		}
		return list[i], nil
	}}
}

// ordered is a Stage 1 reply in the order the prompt asks for (the four
// Stage 2 keys first), fields asked as strings, then tail's members.
func ordered(action, objective string, fields []string, tail string) string {
	specs := make([]map[string]any, 0, len(fields))
	for _, f := range fields {
		specs = append(specs, map[string]any{"name": f, "type": "string", "required": true, "description": "the " + f})
	}
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	reply := `{"actionObjective": ` + j(objective) + `, "action": ` + j(action) + `, "parametersContext": ` + j("context for "+objective) +
		`, "parametersSchema": ` + j(map[string]any{"fields": specs}) + `, "learnings": []`
	if tail != "" {
		reply += ", " + tail
	}
	return reply + "}"
}

// deltaLog records the deltas an engine publishes.
type deltaLog struct {
	mu  sync.Mutex
	got []workflow.Delta
}

func (d *deltaLog) PublishDelta(x workflow.Delta) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, x)
}

func (d *deltaLog) text(step int, field string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	for _, x := range d.got {
		if x.Step == step && x.Field == field {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// budgetLog is a Budgeter that records what each call used.
type budgetLog struct {
	mu      sync.Mutex
	settled []workflow.ModelUsage
}

func (b *budgetLog) Check(context.Context, string) error { return nil }
func (b *budgetLog) Reserve(_ context.Context, user string, tokens int64) (workflow.BudgetReservation, error) {
	return workflow.BudgetReservation{UserID: user, Tokens: tokens}, nil
}
func (b *budgetLog) Settle(_ context.Context, _ workflow.BudgetReservation, used workflow.ModelUsage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settled = append(b.settled, used)
}

func (b *budgetLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.settled)
}

func TestStage2StartsWhileStage1Streams(t *testing.T) {
	t.Parallel()
	reg := enginetest.NewRegistry()
	model := newStreamingModel(true,
		[]string{ordered(enginetest.Echo, "echo hello", []string{"text"}, ""), ordered(workflow.CompleteAction, "answer", []string{"message"}, "")},
		[]string{enginetest.Params(map[string]any{"text": "hello"}), enginetest.Params(map[string]any{"message": "All \"done\"."})})
	deltas := &deltaLog{}
	cfg := testConfig("a")
	cfg.Deltas = deltas
	store := newStore()
	e := startEngine(t, cfg, store, model, reg)
	wf := wait(t, e, create(t, e, "echo hello", 5).ID)
	if model.missed.Load() {
		t.Fatal("Stage 2 did not start before Stage 1's reply ended")
	}
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %s/%s (%s)", wf.Status, wf.StopReason, wf.Error)
	}
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "hello" {
		t.Errorf("executions %+v, want echo once with hello", calls)
	}
	var early int
	for _, tr := range enginetest.Traces(t, store, wf.ID) {
		if tr.Discarded {
			t.Errorf("a trace is discarded: %+v", tr)
		}
		if tr.Stage == workflow.StageTwo {
			early++
			if tr.StartedAtMs < 0 || tr.OverlapMs < 0 || tr.Error != "" {
				t.Errorf("stage 2 trace %+v", tr)
			}
		}
	}
	if early != 2 || wf.Stats.DiscardedCalls != 0 || wf.Stats.LLMCalls != 4 {
		t.Errorf("%d stage 2 traces, stats %+v; want 2 and 4 calls, none discarded", early, wf.Stats)
	}
	if got := deltas.text(1, "actionObjective"); got != "echo hello" {
		t.Errorf("step 1 objective deltas %q", got)
	}
	if got := deltas.text(2, "message"); got != `All "done".` {
		t.Errorf("answer deltas %q, want the decoded message", got)
	}
	if got := deltas.text(2, "parameters"); got != enginetest.Params(map[string]any{"message": "All \"done\"."}) {
		t.Errorf("stage 2 raw deltas %q", got)
	}
}

// A Stage 1 reply whose head passes but whose whole is rejected — it ends
// with a "parameters" key, or names a document that does not exist —
// discards the early Stage 2 (cancelled while it runs, or finished and
// unused), and the step goes on as without one: Stage 1 is retried with
// the feedback, Stage 2 is asked from the accepted reply, and the action
// runs once with its values. The discarded call is traced, counted in
// the stats and settled in the budget; its deltas are not published.
func TestRejectedStage1DiscardsTheEarlyStage2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tail, feedback string
		early                string // the early Stage 2's reply; "" blocks until cancelled
	}{
		{"parameters key", `"parameters": {"text": "typed by stage 1"}`, `"parameters" key`, ""},
		{"unknown reference", `"requiredInputDocuments": ["docItem:doc_nope:x.txt"]`, "docItem:doc_nope:x.txt",
			enginetest.Params(map[string]any{"text": "from the discarded call"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := enginetest.NewRegistry()
			model := newStreamingModel(true,
				[]string{ordered(enginetest.Echo, "echo hi", []string{"text"}, tt.tail), ordered(enginetest.Echo, "echo hi", []string{"text"}, ""),
					ordered(workflow.CompleteAction, "answer", []string{"message"}, "")},
				[]string{tt.early, enginetest.Params(map[string]any{"text": "hi"}), enginetest.Params(map[string]any{"message": "done"})})
			deltas, budget := &deltaLog{}, &budgetLog{}
			cfg := testConfig("a")
			cfg.Deltas, cfg.Budget = deltas, budget
			store := newStore()
			e := startEngine(t, cfg, store, model, reg)
			wf := wait(t, e, create(t, e, "echo hi", 5).ID)
			if model.missed.Load() {
				t.Fatal("Stage 2 did not start before Stage 1's reply ended")
			}
			if wf.Status != workflow.StatusCompleted {
				t.Fatalf("round ended %s/%s (%s)", wf.Status, wf.StopReason, wf.Error)
			}
			if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "hi" {
				t.Errorf("executions %+v, want echo once with the accepted hi", calls)
			}
			var discarded []workflow.Trace
			for _, tr := range enginetest.Traces(t, store, wf.ID) {
				if tr.Discarded {
					discarded = append(discarded, tr)
				}
				if tr.Stage == workflow.StageOne && tr.Step == 1 && tr.Attempt == 2 && !strings.Contains(promptText(tr.Prompt), tt.feedback) {
					t.Errorf("the retried Stage 1 prompt lacks the feedback %q", tt.feedback)
				}
			}
			if len(discarded) != 1 || discarded[0].Stage != workflow.StageTwo || discarded[0].Step != 1 {
				t.Fatalf("discarded traces %+v, want step 1's early Stage 2", discarded)
			}
			if tt.early == "" && !strings.HasPrefix(discarded[0].Error, "cancelled") {
				t.Errorf("the blocked early call was not cancelled: %q", discarded[0].Error)
			}
			// 3 Stage 1 calls, the discarded Stage 2 and 2 kept ones.
			if wf.Stats.LLMCalls != 6 || wf.Stats.DiscardedCalls != 1 || budget.count() != 6 {
				t.Errorf("stats %+v, %d budget settlements; want 6 calls (1 discarded), 6 settled", wf.Stats, budget.count())
			}
			if got := deltas.text(1, "parameters"); got != enginetest.Params(map[string]any{"text": "hi"}) {
				t.Errorf("step 1's stage 2 deltas %q: want only the kept call's", got)
			}
		})
	}
}

// An action under the intent rule never starts Stage 2 early: the step
// pauses after Stage 1, and Stage 2 runs after the decision.
func TestIntentApprovalNeverStartsStage2Early(t *testing.T) {
	t.Parallel()
	reg := enginetest.NewRegistry()
	model := newStreamingModel(false, []string{ordered(enginetest.Echo, "echo hi", []string{"text"}, "")}, nil)
	store := newStore()
	e := startEngine(t, intentConfig(), store, model, reg)
	wf := intentPaused(t, e, store, reg, "echo hi")
	if got := stages(model.script.Calls()); len(got) != 1 || got[0] != workflow.StageOne {
		t.Errorf("model calls %v, want Stage 1 only before the decision", got)
	}
	_ = wf
}

// stage2.earlyStart: false waits for Stage 1's end, as before.
func TestEarlyStartOff(t *testing.T) {
	t.Parallel()
	reg := enginetest.NewRegistry()
	model := newStreamingModel(false,
		[]string{ordered(enginetest.Echo, "echo hi", []string{"text"}, `"parameters": {}`), ordered(enginetest.Echo, "echo hi", []string{"text"}, ""),
			ordered(workflow.CompleteAction, "answer", []string{"message"}, "")},
		[]string{enginetest.Params(map[string]any{"text": "hi"}), enginetest.Params(map[string]any{"message": "done"})})
	store := newStore()
	e := enginetest.StartEngine(t, testConfig("a"), store, model, reg,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(newBuilder(t), react.EarlyStage2(false))})
	wf := wait(t, e, create(t, e, "echo hi", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.Stats.DiscardedCalls != 0 || wf.Stats.LLMCalls != 5 {
		t.Fatalf("round %s, stats %+v; want completed in 5 calls, none discarded", wf.Status, wf.Stats)
	}
}

// A reply whose "parameters" key comes before the head is rejected and
// retried like any; whether an early Stage 2 was started (it is not) the
// round then runs as without one, and none is counted as kept.
func TestParametersKeyBeforeTheHeadStartsNothing(t *testing.T) {
	t.Parallel()
	reg := enginetest.NewRegistry()
	bad := `{"parameters": {"text": "x"}, ` + strings.TrimPrefix(ordered(enginetest.Echo, "echo hi", []string{"text"}, ""), "{")
	model := newStreamingModel(false,
		[]string{bad, ordered(enginetest.Echo, "echo hi", []string{"text"}, ""), ordered(workflow.CompleteAction, "answer", []string{"message"}, "")},
		[]string{enginetest.Params(map[string]any{"text": "hi"}), enginetest.Params(map[string]any{"message": "done"})})
	store := newStore()
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo hi", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.Stats.DiscardedCalls != 0 || wf.Stats.LLMCalls != 5 {
		t.Fatalf("round %s (%s), stats %+v; want completed in 5 calls, none discarded", wf.Status, wf.Error, wf.Stats)
	}
}
