package react_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// sharedScript hands out replies to several engines' models in order of
// finished calls, recording the stage and prompt of each finished call;
// calls made while block() is true wait for their context instead.
type sharedScript struct {
	mu       sync.Mutex
	replies  []string
	finished []workflow.Stage
	prompts  []string
}

func (s *sharedScript) model(block func() bool) *scripted.Model {
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		if block != nil && block() {
			return "", scripted.ErrBlock
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.finished) == len(s.replies) {
			return "", workflow.Errorf(workflow.KindUnavailable, "script exhausted")
		}
		s.finished = append(s.finished, req.Stage)
		s.prompts = append(s.prompts, scripted.Call{ModelRequest: req}.Text())
		return s.replies[len(s.finished)-1], nil
	}}
}

func (s *sharedScript) stages() []workflow.Stage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]workflow.Stage(nil), s.finished...)
}

func (s *sharedScript) prompt(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.prompts) {
		return ""
	}
	return s.prompts[i]
}

// crashScenario is a scripted round and what it must leave behind however
// often it is interrupted.
type crashScenario struct {
	replies []string
	// stages are the finished model calls across both instances; attempts
	// are their trace's attempt numbers.
	stages   []workflow.Stage
	attempts []int
	shapes   []shape
	// feedback maps a finished call's index to a text its prompt must
	// carry as VALIDATION_FEEDBACK; every other call carries none.
	feedback map[int]string
}

// happyPath echoes twice and completes. Run commits: select,
// parameterize, step 1, select, parameterize, step 2, select, complete.
func happyPath() crashScenario {
	return crashScenario{
		replies:  replies(enginetest.Echoes("a"), enginetest.Echoes("b"), enginetest.Completes("done")),
		stages:   []workflow.Stage{s1, s2, s1, s2, s1, s2},
		attempts: []int{1, 1, 1, 1, 1, 1},
		shapes: []shape{
			{1, 0, workflow.RoleUser, "", ""},
			{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
			{1, 2, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
			{1, 3, workflow.RoleAssistant, "", ""},
		},
	}
}

// withRejections echoes once and completes, but Stage 1 and Stage 2 of the
// first step are each rejected once. Run commits: rejected Stage 1, select,
// rejected Stage 2, parameterize, step 1, select, complete.
func withRejections() crashScenario {
	echo := enginetest.Echoes("a")
	return crashScenario{
		replies: replies(
			[]string{enginetest.Select("no.such", "guess", nil, ""), echo[0]},
			[]string{enginetest.Params(map[string]any{"text": "a", "colour": "red"}), echo[1]},
			enginetest.Completes("done")),
		stages:   []workflow.Stage{s1, s1, s2, s2, s1, s2},
		attempts: []int{1, 2, 1, 2, 1, 1},
		shapes: []shape{
			{1, 0, workflow.RoleUser, "", ""},
			{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
			{1, 2, workflow.RoleAssistant, "", ""},
		},
		feedback: map[int]string{1: "no.such", 3: "/colour"},
	}
}

// crashPoint is when instance one dies: after its run made commits
// commits, or, when call > 0, as its model call number call (0-based, over
// the finished calls of both instances) starts — after whatever it
// persisted before that call.
type crashPoint struct{ commits, call int }

func (p crashPoint) String() string {
	if p.call > 0 {
		return fmt.Sprintf("during call %d", p.call)
	}
	return fmt.Sprintf("after commit %d", p.commits)
}

func afterCommits(ns ...int) []crashPoint {
	out := make([]crashPoint, len(ns))
	for i, n := range ns {
		out[i] = crashPoint{commits: n}
	}
	return out
}

func duringCalls(ks ...int) []crashPoint {
	out := make([]crashPoint, len(ks))
	for i, k := range ks {
		out[i] = crashPoint{call: k}
	}
	return out
}

// An instance crashing after any persisted phase, or in the middle of any
// model call, loses nothing: another instance takes the round over once
// the lease expires and repeats no finished model call — a rejected one
// neither, with its stats kept — and a retry after the takeover still
// carries the rejection's feedback.
func TestCrashAfterEachPhaseIsTakenOver(t *testing.T) {
	t.Parallel()
	mem := func(testing.TB) workflow.Store { return newStore() }
	t.Run("happy path", func(t *testing.T) {
		crashTakeover(t, mem, happyPath(), slices.Concat(afterCommits(1, 2, 3, 4, 5, 6, 7), duringCalls(1, 2, 3, 4, 5))...)
	})
	t.Run("rejected attempts", func(t *testing.T) {
		crashTakeover(t, mem, withRejections(), slices.Concat(afterCommits(1, 2, 3, 4, 5, 6), duringCalls(1, 2, 3, 4, 5))...)
	})
}

// crashTakeover runs sc once per crash point, instance one dying at the
// point, on a store shared with instance two, which then ends the round.
func crashTakeover(t *testing.T, newShared func(testing.TB) workflow.Store, sc crashScenario, points ...crashPoint) {
	for _, p := range points {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			mem := newShared(t)
			dying := enginetest.NewDyingStore(mem, p.commits)
			script := &sharedScript{replies: sc.replies}
			reg := enginetest.NewRegistry()
			crashed := func() bool {
				if p.call > 0 && len(script.stages()) >= p.call {
					dying.Kill()
				}
				return dying.Dead()
			}
			e1 := startEngine(t, enginetest.TakeoverConfig("one"), dying, script.model(crashed), reg)
			wf := create(t, e1, "echo a and b", 5)
			select {
			case <-dying.Died():
			case <-time.After(10 * time.Second):
				t.Fatal("instance one never reached its crash point")
			}
			e2 := startEngine(t, testConfig("two"), mem, script.model(nil), reg)
			got := wait(t, e2, wf.ID)
			if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
			}
			if diff := cmp.Diff(sc.stages, script.stages()); diff != "" {
				t.Errorf("finished model calls across both instances (-want +got):\n%s", diff)
			}
			for i := range sc.stages {
				checkFeedback(t, i, script.prompt(i), sc.feedback[i])
			}
			if diff := cmp.Diff(sc.attempts, modelAttempts(t, mem, wf.ID)); diff != "" {
				t.Errorf("attempts of the model traces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sc.shapes, shapes(messages(t, mem, wf.ID))); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if want := len(sc.stages); got.Stats.LLMCalls != want {
				t.Errorf("stats.llmCalls = %d, want %d", got.Stats.LLMCalls, want)
			}
		})
	}
}

// checkFeedback fails t unless prompt carries VALIDATION_FEEDBACK naming
// want, or, for want "", no feedback at all.
func checkFeedback(t *testing.T, i int, prompt, want string) {
	t.Helper()
	has := strings.Contains(prompt, "Validation feedback")
	switch {
	case want == "" && has:
		t.Errorf("call %d carries feedback, want none:\n%s", i, prompt)
	case want != "" && (!has || !strings.Contains(prompt, want)):
		t.Errorf("call %d lacks the feedback naming %q:\n%s", i, want, prompt)
	}
}

// modelAttempts returns the attempt numbers of the workflow's Stage 1 and
// Stage 2 traces, oldest first.
func modelAttempts(t *testing.T, s workflow.Store, id string) []int {
	t.Helper()
	traces, err := s.Traces(context.Background(), id)
	if err != nil {
		t.Fatalf("Traces: %v", err)
	}
	var out []int
	for _, tr := range traces {
		if tr.Stage == s1 || tr.Stage == s2 {
			out = append(out, tr.Attempt)
		}
	}
	return out
}
