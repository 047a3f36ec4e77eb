package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

func TestPreferWait(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"wait=5", 5 * time.Second, true},
		{"respond-async, wait=10", 10 * time.Second, true},
		{`WAIT = "3"`, 3 * time.Second, true},
		{"wait=600", MaxWait, true},
		{"wait=0", 0, false},
		{"wait=soon", 0, false},
		{"return=minimal", 0, false},
		{"", 0, false},
	} {
		if got, ok := preferWait(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("preferWait(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestWaitAnswersWhenTheRoundSettlesOrAtTheDeadline: with Prefer: wait, a
// round that ends in time is answered 200 with its messages and
// Preference-Applied; one still running at the deadline gets today's 201.
func TestWaitAnswersWhenTheRoundSettlesOrAtTheDeadline(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	running := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(running, workflow.Message{ID: "m1", Round: 1, Role: workflow.RoleUser, Text: "hi"})
	env.engine.CreateFn = func(engine.NewWorkflow) (*workflow.Workflow, error) { return running.Clone(), nil }
	env.store.onGet = func(s *fakeStore, id string) {
		if s.gets == 3 { // the third read: the round ends
			done := s.wfs[id].Clone()
			done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
			s.putLocked(done, workflow.Message{ID: "m2", Round: 1, Step: 1, Role: workflow.RoleAssistant, Text: "done"})
		}
	}
	req := func(prefer string) *http.Request {
		r, _ := http.NewRequest("POST", "/api/v1/workflows", strings.NewReader(`{"prompt":"hi"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		r.Header.Set("Prefer", prefer)
		return r
	}
	rec := env.serve(req("wait=5"))
	if rec.Code != http.StatusOK || rec.Header().Get("Preference-Applied") != "wait" ||
		!strings.Contains(rec.Body.String(), `"status":"completed"`) || !strings.Contains(rec.Body.String(), `"text":"done"`) {
		t.Errorf("waited create: %d %q %s", rec.Code, rec.Header().Get("Preference-Applied"), rec.Body)
	}

	still := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(still)
	env.store.onGet = nil
	env.engine.CreateFn = func(engine.NewWorkflow) (*workflow.Workflow, error) { return still.Clone(), nil }
	rec = env.serve(req("wait=1"))
	if rec.Code != http.StatusCreated || rec.Header().Get("Preference-Applied") != "" || strings.Contains(rec.Body.String(), `"messages"`) {
		t.Errorf("create at the deadline: %d %q %s, want today's 201 without messages", rec.Code, rec.Header().Get("Preference-Applied"), rec.Body)
	}
}

// serve runs one prepared request through the server.
func (e *testEnv) serve(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.srv.Routes().ServeHTTP(rec, r)
	return rec
}

// TestWaitAnswersWithTheRunsMessages: a round that ends in a run of this
// instance hands the waiters the workflow's messages (published with its
// end);
// the answer is the round's messages among them, not a read of the store
// (which here holds none of them).
func TestWaitAnswersWithTheRunsMessages(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for _, owner := range []string{"alice", "bob"} {
		running := testWorkflow(owner, workflow.StatusRunning)
		running.Round = 2
		env.store.put(running)
		env.engine.CreateFn = func(engine.NewWorkflow) (*workflow.Workflow, error) { return running.Clone(), nil }
		go func() {
			for env.changes.watching(running.ID) == 0 {
				time.Sleep(time.Millisecond)
			}
			done := running.Clone()
			done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
			env.changes.Publish(workflow.Change{WorkflowID: done.ID, Ended: done, Messages: []workflow.Message{
				{ID: "m1", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "an earlier round"},
				{ID: "m2", Seq: 2, Round: 2, Role: workflow.RoleUser, Text: "hi"},
				{ID: "m3", Seq: 3, Round: 2, Step: 1, Role: workflow.RoleAssistant, Text: "from the run"},
			}})
		}()
		r, _ := http.NewRequest("POST", "/api/v1/workflows", strings.NewReader(`{"prompt":"hi"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		r.Header.Set("Prefer", "wait=10")
		rec := env.serve(r)
		body := rec.Body.String()
		switch {
		case owner == "alice" && (rec.Code != http.StatusOK || !strings.Contains(body, `"text":"from the run"`) ||
			!strings.Contains(body, `"text":"hi"`) || strings.Contains(body, "an earlier round")):
			t.Errorf("waited create: %d %s; want 200 with round 2's messages as the run handed them", rec.Code, body)
		case owner == "bob" && strings.Contains(body, "from the run"):
			// Only a mixed-up engine could hand alice bob's round; the
			// messages still go only to their owner.
			t.Errorf("alice's request was answered with the messages of bob's round: %s", body)
		}
	}
}

// TestWaitAnswersWhenAQueuedRoundFollows: a round that ends by starting a
// queued round in the same commit (the store never shows it settled) is
// answered once the store shows the next round, with the waited round's
// messages.
func TestWaitAnswersWhenAQueuedRoundFollows(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	running := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(running, workflow.Message{ID: "m1", Round: 1, Role: workflow.RoleUser, Text: "hi"})
	env.engine.CreateFn = func(engine.NewWorkflow) (*workflow.Workflow, error) { return running.Clone(), nil }
	env.store.onGet = func(s *fakeStore, id string) {
		if s.gets == 3 { // the round ends; the queued round 2 starts
			next := s.wfs[id].Clone()
			next.Round, next.Step = 2, 1
			s.putLocked(next,
				workflow.Message{ID: "m2", Round: 1, Step: 1, Role: workflow.RoleAssistant, Text: "done"},
				workflow.Message{ID: "m3", Round: 2, Role: workflow.RoleUser, Text: "queued"})
		}
	}
	r, _ := http.NewRequest("POST", "/api/v1/workflows", strings.NewReader(`{"prompt":"hi"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+aliceToken)
	r.Header.Set("Prefer", "wait=5")
	rec := env.serve(r)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `"text":"done"`) || strings.Contains(body, `"text":"queued"`) {
		t.Errorf("waited create: %d %s; want 200 with round 1's messages only", rec.Code, body)
	}
}
