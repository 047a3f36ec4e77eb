package react_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// compactBudget is the small WORKFLOW_HISTORY budget of the compaction
// tests: a few echo steps fill it.
const compactBudget = 1200

// longRound is a scripted model for a round of n echo steps and a final
// answer, whatever compactions happen in between: it answers by stage and
// counts only the replies the round committed (see undo).
type longRound struct {
	n int

	mu                      sync.Mutex
	stage1, stage2, compact int
	// onCompact, when set, runs on each compaction call with its number.
	onCompact func(n int)
	// compactReply, when set, answers the compaction calls.
	compactReply func(n int) (string, error)
}

// compactions returns how many compaction calls were answered.
func (l *longRound) compactions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.compact
}

func redisURL() string { return os.Getenv("REDIS_URL") }

func (l *longRound) model() *scripted.Model {
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch req.Stage {
		case workflow.StageCompact:
			l.compact++
			if l.onCompact != nil {
				l.onCompact(l.compact)
			}
			if l.compactReply != nil {
				return l.compactReply(l.compact)
			}
			return fmt.Sprintf("Summary %d: the items echoed so far each went into their own echo.txt.", l.compact), nil
		case workflow.StageOne:
			l.stage1++
			if l.stage1 > l.n {
				return enginetest.Select(workflow.CompleteAction, "answer", nil, "", "message"), nil
			}
			return enginetest.Select(enginetest.Echo, fmt.Sprintf("echo item %d", l.stage1), nil, "", "text"), nil
		case workflow.StageTwo:
			l.stage2++
			if l.stage2 > l.n {
				return enginetest.Params(map[string]any{"message": "all echoed"}), nil
			}
			return enginetest.Params(map[string]any{"text": fmt.Sprintf("item %d", l.stage2)}), nil
		}
		return "", fmt.Errorf("unexpected stage %s", req.Stage)
	}}
}

// compactingMode is the React mode with a small history budget.
func compactingMode(t testing.TB, noCompaction bool) map[workflow.ModeName]workflow.Mode {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	b := prompts.NewBuilder(set, prompts.Options{HistoryBudget: compactBudget, NoCompaction: noCompaction})
	return map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(b)}
}

// historyOf returns the sealed history section of a Stage 1 prompt
// (WORKFLOW_HISTORY_SEALED): the part the history budget bounds.
func historyOf(t *testing.T, prompt string) string {
	t.Helper()
	const head = "# Earlier steps (newest first)\n"
	i := strings.Index(prompt, head)
	if i < 0 {
		t.Fatalf("no history in the prompt:\n%s", prompt)
	}
	h, _, _ := strings.Cut(prompt[i+len(head):], "\n\n# Available documents")
	return h
}

var generatedIDs = regexp.MustCompile(`\b(msg|doc)_[0-9A-Za-z]+`)

// A 60-step round with a small history budget: summaries appear as
// messages of role summary, every Stage 1 history stays within the budget,
// later prompts carry the newest summary in place of the entries it covers
// (golden), each compaction folds the previous summary in, and the calls
// are counted in the stats — on both stores.
func TestCompactionOverALongRound(t *testing.T) {
	t.Parallel()
	stores := map[string]func(testing.TB) workflow.Store{
		"memstore": func(testing.TB) workflow.Store { return newStore() },
	}
	if url := redisURL(); url != "" {
		stores["redis"] = redisStores(t)
	}
	for name, newShared := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newShared(t), enginetest.NewRegistry()
			script := &longRound{n: 60}
			model := script.model()
			e := enginetest.StartEngine(t, testConfig("a"), store, model, reg, compactingMode(t, false))
			wf := enginetest.Wait(t, e, create(t, e, "echo sixty items", 61).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.Actions != 60 {
				t.Fatalf("ended %s/%s with %d actions (%s), want completed with 60", wf.Status, wf.StopReason, wf.Stats.Actions, wf.Error)
			}
			msgs := messages(t, store, wf.ID)
			var summaries []workflow.Message
			for _, m := range msgs {
				if m.Role == workflow.RoleSummary {
					summaries = append(summaries, m)
				}
			}
			calls := model.Calls()
			var stage1, compacts []scripted.Call
			for _, c := range calls {
				switch c.Stage {
				case workflow.StageOne:
					stage1 = append(stage1, c)
				case workflow.StageCompact:
					compacts = append(compacts, c)
				}
			}
			if len(summaries) < 3 || len(summaries) != len(compacts) || len(stage1) != 61 {
				t.Fatalf("%d summaries, %d compaction calls, %d Stage 1 calls; want several, one per call, 61",
					len(summaries), len(compacts), len(stage1))
			}
			if want := 2*61 + len(compacts); wf.Stats.LLMCalls != want {
				t.Errorf("stats.llmCalls = %d, want %d (compaction calls counted)", wf.Stats.LLMCalls, want)
			}
			for i, s := range summaries {
				if i > 0 && s.CompactedThrough <= summaries[i-1].CompactedThrough {
					t.Errorf("summary %d covers through seq %d, not past the previous %d", i+1, s.CompactedThrough, summaries[i-1].CompactedThrough)
				}
				if s.CompactedThrough >= s.Seq || !strings.HasPrefix(s.Text, fmt.Sprintf("Summary %d:", i+1)) || s.Summary == "" {
					t.Errorf("summary %d = seq %d through %d, %q (%q)", i+1, s.Seq, s.CompactedThrough, s.Text, s.Summary)
				}
			}
			for i, c := range compacts[1:] {
				if !strings.Contains(c.Text(), fmt.Sprintf("Summary %d:", i+1)) {
					t.Errorf("compaction call %d does not fold in summary %d", i+2, i+1)
				}
			}
			for i, c := range stage1 {
				h := historyOf(t, c.Text())
				if n := utf8.RuneCountInString(h); n > compactBudget {
					t.Errorf("Stage 1 call %d: history of %d characters, over the budget of %d", i+1, n, compactBudget)
				}
				if strings.Contains(h, "omitted)") {
					t.Errorf("Stage 1 call %d dropped entries although compaction is on", i+1)
				}
			}
			last := historyOf(t, stage1[60].Text())
			if !strings.Contains(last, fmt.Sprintf("Summary %d:", len(summaries))) {
				t.Errorf("the last Stage 1 prompt lacks the newest summary:\n%s", last)
			}
			if name == "memstore" {
				golden(t, "compacted_history.golden", generatedIDs.ReplaceAllString(last, "${1}_ID"))
			}
		})
	}
}

// With compaction off the history drops its oldest entries, with no model
// call and no summary.
func TestCompactionOff(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	script := &longRound{n: 15}
	model := script.model()
	e := enginetest.StartEngine(t, testConfig("a"), store, model, reg, compactingMode(t, true))
	wf := enginetest.Wait(t, e, create(t, e, "echo fifteen items", 16).ID)
	if wf.StopReason != workflow.StopCompleted || wf.Stats.LLMCalls != 32 {
		t.Fatalf("ended %s with %d model calls, want completed with 32", wf.StopReason, wf.Stats.LLMCalls)
	}
	for _, m := range messages(t, store, wf.ID) {
		if m.Role == workflow.RoleSummary {
			t.Fatal("a summary was written with compaction off")
		}
	}
	calls := model.Calls()
	if h := historyOf(t, calls[len(calls)-2].Text()); !strings.Contains(h, "older entries omitted)") {
		t.Errorf("the last Stage 1 history drops nothing:\n%s", h)
	}
}

// An instance crashing between a compaction call and its commit loses no
// committed work: another instance makes the compaction call again and
// goes on; no step runs twice and no summary is written twice.
func TestCrashDuringCompaction(t *testing.T) {
	t.Parallel()
	stores := map[string]func(testing.TB) workflow.Store{
		"memstore": func(testing.TB) workflow.Store { return newStore() },
	}
	if url := redisURL(); url != "" {
		stores["redis"] = redisStores(t)
	}
	for name, newShared := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			shared := newShared(t)
			dying := enginetest.NewDyingStore(shared, 0)
			reg := enginetest.NewRegistry()
			script := &longRound{n: 20}
			script.onCompact = func(n int) {
				if n == 2 {
					dying.Kill() // the reply comes back, its commit never lands
				}
			}
			// Leases of 2 s, not TakeoverConfig's 300 ms: a run stalled by
			// a loaded machine must not lose its lease and run a step again
			// (its idempotency key would cover that, but this test counts
			// executions to prove the crash repeats none), yet instance
			// one's must expire within the test.
			one, two := testConfig("one"), testConfig("two")
			one.LeaseTTL, two.LeaseTTL = 2*time.Second, 2*time.Second
			e1 := enginetest.StartEngine(t, one, dying, script.model(), reg, compactingMode(t, false))
			wf := create(t, e1, "echo twenty items", 21)
			select {
			case <-dying.Died():
			case <-time.After(20 * time.Second):
				t.Fatal("instance one never reached the second compaction")
			}
			e2 := enginetest.StartEngine(t, two, shared, script.model(), reg, compactingMode(t, false))
			got := enginetest.Wait(t, e2, wf.ID)
			if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted || got.Stats.Actions != 20 {
				t.Fatalf("ended %s/%s with %d actions (%s), want completed with 20", got.Status, got.StopReason, got.Stats.Actions, got.Error)
			}
			keys := map[string]int{}
			for _, c := range reg.Calls() {
				keys[c.IdempotencyKey]++
			}
			if len(keys) != 20 || len(reg.Calls()) != 20 {
				t.Errorf("%d executions of %d steps, want each of the 20 steps run once", len(reg.Calls()), len(keys))
			}
			through := map[int64]bool{}
			var summaries int
			for _, m := range messages(t, shared, wf.ID) {
				if m.Role != workflow.RoleSummary {
					continue
				}
				summaries++
				if through[m.CompactedThrough] {
					t.Errorf("two summaries cover through seq %d", m.CompactedThrough)
				}
				through[m.CompactedThrough] = true
				if strings.HasPrefix(m.Text, "Summary 2:") {
					t.Errorf("the lost compaction's summary was committed: %q", m.Text)
				}
			}
			// The lost call was made again: one more call than summaries.
			if n := script.compactions(); n != summaries+1 {
				t.Errorf("%d compaction calls for %d summaries, want exactly one repeated", n, summaries)
			}
		})
	}
}

// A compaction the model does not give (an empty reply, an outage) costs
// the round nothing: that step's Stage 1 drops the oldest entries as with
// compaction off, the call is not retried within the step, and a later step
// tries again.
func TestCompactionSkippedWhenTheModelFails(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]func(int) (string, error){
		"empty reply": func(int) (string, error) { return "  ", nil },
		"model error": func(int) (string, error) { return "", workflow.Errorf(workflow.KindUnavailable, "compact model down") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			script := &longRound{n: 15, compactReply: reply}
			model := script.model()
			e := enginetest.StartEngine(t, testConfig("a"), store, model, reg, compactingMode(t, false))
			wf := enginetest.Wait(t, e, create(t, e, "echo fifteen items", 16).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.Actions != 15 {
				t.Fatalf("ended %s/%s with %d actions (%s), want completed with 15", wf.Status, wf.StopReason, wf.Stats.Actions, wf.Error)
			}
			for _, m := range messages(t, store, wf.ID) {
				if m.Role == workflow.RoleSummary {
					t.Fatal("a summary was written from a failed compaction")
				}
			}
			calls := model.Calls()
			compacts, last := 0, workflow.Stage("")
			for _, c := range calls {
				if c.Stage == workflow.StageCompact {
					compacts++
					if last == workflow.StageCompact {
						t.Error("a failed compaction was retried within its step")
					}
				}
				last = c.Stage
			}
			if compacts < 2 {
				t.Errorf("%d compaction calls, want one in each step that needed it", compacts)
			}
			if h := historyOf(t, calls[len(calls)-2].Text()); !strings.Contains(h, "older entries omitted)") {
				t.Errorf("the last Stage 1 history drops nothing:\n%s", h)
			}
			for _, tr := range enginetest.Traces(t, store, wf.ID) {
				if tr.Stage == workflow.StageCompact && tr.Error == "" {
					t.Errorf("compaction trace without its error: %+v", tr)
				}
			}
		})
	}
}
