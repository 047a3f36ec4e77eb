package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// idemEnv is a test server whose Idempotency-Key answers are kept in a
// memory store, and counts of what reached the engine.
type idemEnv struct {
	*testEnv
	creates, stops atomic.Int32
}

func newIdemEnv(t *testing.T) *idemEnv {
	t.Helper()
	env := &idemEnv{}
	env.testEnv = newTestEnv(t, func(o *Options) { o.Idempotency = memstore.New() })
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		env.creates.Add(1)
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	env.engine.StopFn = func(userID, id string) (*workflow.Workflow, error) {
		env.stops.Add(1)
		w := testWorkflow(userID, workflow.StatusStopped)
		w.ID = id
		return w, nil
	}
	return env
}

// post sends a POST with an Idempotency-Key ("" for none).
func (e *idemEnv) post(t *testing.T, path, token, key string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set(idempotencyHeader, key)
	}
	rec := httptest.NewRecorder()
	e.srv.Routes().ServeHTTP(rec, req)
	return rec
}

func TestIdempotencyReplaysTheFirstAnswer(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	body := map[string]any{"prompt": "summarise"}
	first := env.post(t, "/api/v1/workflows", aliceToken, "k1", body)
	again := env.post(t, "/api/v1/workflows", aliceToken, "k1", body)
	if first.Code != http.StatusCreated || again.Code != http.StatusCreated {
		t.Fatalf("statuses = %d, %d, want 201 twice: %s", first.Code, again.Code, again.Body)
	}
	if n := env.creates.Load(); n != 1 {
		t.Errorf("the engine created %d workflows, want 1", n)
	}
	if got, want := again.Body.String(), first.Body.String(); got != want {
		t.Errorf("replayed body = %s, want %s", got, want)
	}
	if got := again.Header().Get(replayedHeader); got != "true" {
		t.Errorf("replay's %s = %q, want true", replayedHeader, got)
	}
	if first.Header().Get(replayedHeader) != "" {
		t.Errorf("the first answer says it was replayed")
	}
	if got, want := again.Header().Get("Content-Type"), first.Header().Get("Content-Type"); got != want {
		t.Errorf("replayed Content-Type = %q, want %q", got, want)
	}
}

func TestIdempotencyRefusesAnotherRequestWithTheKey(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	if rec := env.post(t, "/api/v1/workflows", aliceToken, "k1", map[string]any{"prompt": "a"}); rec.Code != http.StatusCreated {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	tests := []struct {
		name, path string
		body       any
	}{
		{"another body", "/api/v1/workflows", map[string]any{"prompt": "b"}},
		{"another query", "/api/v1/workflows?x=1", map[string]any{"prompt": "a"}},
		{"stop", "/api/v1/workflows/" + idemWorkflowID + "/stop", nil},
		{"resume", "/api/v1/workflows/" + idemWorkflowID + "/resume", nil},
		{"rounds", "/api/v1/workflows/" + idemWorkflowID + "/rounds", map[string]any{"prompt": "a"}},
		{"approvals", "/api/v1/workflows/" + idemWorkflowID + "/approvals/apr_1", map[string]any{"decision": "approve"}},
	}
	for _, tc := range tests {
		rec := env.post(t, tc.path, aliceToken, "k1", tc.body)
		if rec.Code != http.StatusUnprocessableEntity || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want a 422 problem", tc.name, rec.Code, rec.Body)
		}
	}
	if env.creates.Load() != 1 || env.stops.Load() != 0 {
		t.Errorf("refused requests reached the engine: %d creates, %d stops", env.creates.Load(), env.stops.Load())
	}
}

func TestIdempotencyKeysArePerUser(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	env.post(t, "/api/v1/workflows", aliceToken, "shared", map[string]any{"prompt": "a"})
	rec := env.post(t, "/api/v1/workflows", bobToken, "shared", map[string]any{"prompt": "b"})
	if rec.Code != http.StatusCreated || rec.Header().Get(replayedHeader) != "" {
		t.Errorf("bob's request with alice's key: %d, replayed %q", rec.Code, rec.Header().Get(replayedHeader))
	}
	if n := env.creates.Load(); n != 2 {
		t.Errorf("the engine created %d workflows, want 2", n)
	}
}

// TestIdempotencyKeepsOnlyFinalAnswers: a server error, a conflict of the
// moment or a rate limit is not replayed; the retry runs again.
func TestIdempotencyKeepsOnlyFinalAnswers(t *testing.T) {
	t.Parallel()
	for _, kind := range []workflow.Kind{workflow.KindInternal, workflow.KindUnavailable, workflow.KindConflict, workflow.KindTooMany} {
		env := newIdemEnv(t)
		var calls atomic.Int32
		env.engine.StopFn = func(userID, id string) (*workflow.Workflow, error) {
			if calls.Add(1) == 1 {
				return nil, workflow.Errorf(kind, "not now")
			}
			return testWorkflow(userID, workflow.StatusStopped), nil
		}
		path := "/api/v1/workflows/" + idemWorkflowID + "/stop"
		first := env.post(t, path, aliceToken, "k", nil)
		second := env.post(t, path, aliceToken, "k", nil)
		if first.Code < 400 || second.Code != http.StatusOK || second.Header().Get(replayedHeader) != "" || calls.Load() != 2 {
			t.Errorf("%s: answers %d then %d (replayed %q) after %d calls; want the retry to run", kind, first.Code, second.Code, second.Header().Get(replayedHeader), calls.Load())
		}
	}
}

// TestIdempotencyDuplicateWaitsForTheFirst: a duplicate that arrives
// while the first request runs waits and gets the first one's answer.
func TestIdempotencyDuplicateWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	entered, release := make(chan struct{}), make(chan struct{})
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		env.creates.Add(1)
		close(entered)
		<-release
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	body := map[string]any{"prompt": "once"}
	var first *httptest.ResponseRecorder
	var wg sync.WaitGroup
	wg.Go(func() { first = env.post(t, "/api/v1/workflows", aliceToken, "k", body) })
	<-entered
	var second *httptest.ResponseRecorder
	wg.Go(func() { second = env.post(t, "/api/v1/workflows", aliceToken, "k", body) })
	close(release)
	wg.Wait()
	if env.creates.Load() != 1 {
		t.Fatalf("the engine created %d workflows, want 1", env.creates.Load())
	}
	if second.Code != first.Code || second.Body.String() != first.Body.String() {
		t.Errorf("duplicate = %d %s, want the first answer %d %s", second.Code, second.Body, first.Code, first.Body)
	}
}

func TestIdempotencyWithoutKeyOrWithBadKey(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	for range 2 {
		if rec := env.post(t, "/api/v1/workflows", aliceToken, "", map[string]any{"prompt": "a"}); rec.Header().Get(replayedHeader) != "" {
			t.Error("a request without a key was replayed")
		}
	}
	if n := env.creates.Load(); n != 2 {
		t.Errorf("two requests without a key made %d workflows, want 2", n)
	}
	for _, key := range []string{"has space", string(bytes.Repeat([]byte("k"), 256)), "é"} {
		if rec := env.post(t, "/api/v1/workflows", aliceToken, key, map[string]any{"prompt": "a"}); rec.Code != http.StatusBadRequest {
			t.Errorf("key %.20q: %d, want 400", key, rec.Code)
		}
	}
}

// idemWorkflowID is a well-formed workflow id for the routes under one.
var idemWorkflowID = workflow.NewID(workflow.PrefixWorkflow)

// TestIdempotencyReplayHoldsNoSecret (issue 45 item 12): the create that
// asked for a webhook answers its signing secret once; a replay of it
// answers the same workflow without the secret, and the store never
// holds it.
func TestIdempotencyReplayHoldsNoSecret(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	env := &idemEnv{}
	env.testEnv = newTestEnv(t, func(o *Options) {
		o.Idempotency = store
		o.Webhooks = WebhookOptions{CheckURL: func(string) error { return nil }, NewSecret: func() string { return "whsec_dGVzdHNlY3JldA==" }}
	})
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	body := map[string]any{"prompt": "summarise", "webhook": map[string]any{"url": "https://hooks.example/in"}}
	first := env.post(t, "/api/v1/workflows", aliceToken, "k1", body)
	again := env.post(t, "/api/v1/workflows", aliceToken, "k1", body)
	if first.Code != http.StatusCreated || again.Code != http.StatusCreated || again.Header().Get(replayedHeader) != "true" {
		t.Fatalf("answers %d, %d (replayed %q): %s", first.Code, again.Code, again.Header().Get(replayedHeader), again.Body)
	}
	var got struct {
		ID            string `json:"id"`
		WebhookSecret string `json:"webhookSecret"`
	}
	if err := json.Unmarshal(first.Body.Bytes(), &got); err != nil || got.WebhookSecret == "" {
		t.Fatalf("the first answer has no webhookSecret (%v): %s", err, first.Body)
	}
	secret, id := got.WebhookSecret, got.ID
	got.WebhookSecret, got.ID = "", ""
	if err := json.Unmarshal(again.Body.Bytes(), &got); err != nil || got.WebhookSecret != "" || got.ID != id {
		t.Errorf("replay = %s (%v), want workflow %s without webhookSecret", again.Body, err, id)
	}
	rec, _, err := store.ClaimIdempotency(t.Context(), "alice", "k1", "probe", time.Minute)
	if err != nil || rec.Answer == nil || bytes.Contains(rec.Answer.Body, []byte(secret)) {
		t.Errorf("kept answer %+v (%v) holds the secret", rec.Answer, err)
	}
}

// TestIdempotencyRefusedAnswersKeptMinutes (issue 45 item 9): a refused
// (4xx) answer is kept idemRefusedWindow, a success the whole window; an
// answer larger than a user's bound is not kept.
func TestIdempotencyRefusedAnswersKeptMinutes(t *testing.T) {
	t.Parallel()
	var saved []workflow.IdempotencyKeep
	rec := &recordingIdem{IdempotencyStore: memstore.New(), saved: func(k workflow.IdempotencyKeep) { saved = append(saved, k) }}
	env := &idemEnv{}
	env.testEnv = newTestEnv(t, func(o *Options) { o.Idempotency = rec })
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	if r := env.post(t, "/api/v1/workflows", aliceToken, "ok", map[string]any{"prompt": "a"}); r.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	if r := env.post(t, "/api/v1/workflows", aliceToken, "bad", map[string]any{"prompt": ""}); r.Code < 400 || r.Code >= 500 {
		t.Fatalf("empty prompt: %d %s, want a 4xx", r.Code, r.Body)
	}
	want := []workflow.IdempotencyKeep{
		{Window: workflow.DefaultIdempotencyWindow, UserBytes: workflow.DefaultIdempotencyBytesPerUser},
		{Window: idemRefusedWindow, UserBytes: workflow.DefaultIdempotencyBytesPerUser},
	}
	if len(saved) != len(want) || saved[0] != want[0] || saved[1] != want[1] {
		t.Errorf("saved with %+v, want %+v", saved, want)
	}
}

// recordingIdem tells what each answer was saved with.
type recordingIdem struct {
	workflow.IdempotencyStore
	saved func(workflow.IdempotencyKeep)
}

func (r *recordingIdem) SaveIdempotency(ctx context.Context, userID, key, token string, a workflow.IdempotentAnswer, keep workflow.IdempotencyKeep) error {
	r.saved(keep)
	return r.IdempotencyStore.SaveIdempotency(ctx, userID, key, token, a, keep)
}

// TestIdempotencyCoversFork (issue 45 item 4): a fork is new work, so a
// retried fork with the same Idempotency-Key replays the first answer
// instead of forking again.
func TestIdempotencyCoversFork(t *testing.T) {
	t.Parallel()
	env := newIdemEnv(t)
	var forks atomic.Int32
	env.engine.ForkFn = func(userID, id string, req engine.ForkRequest) (*workflow.Workflow, error) {
		forks.Add(1)
		w := testWorkflow(userID, workflow.StatusRunning)
		w.ID = workflow.NewID(workflow.PrefixWorkflow)
		return w, nil
	}
	path := "/api/v1/workflows/" + idemWorkflowID + "/fork"
	body := map[string]any{"round": 1, "step": 1}
	first := env.post(t, path, aliceToken, "f1", body)
	again := env.post(t, path, aliceToken, "f1", body)
	if first.Code != http.StatusCreated || again.Code != first.Code || again.Header().Get(replayedHeader) != "true" {
		t.Fatalf("answers %d, %d (replayed %q): %s", first.Code, again.Code, again.Header().Get(replayedHeader), again.Body)
	}
	if n := forks.Load(); n != 1 || again.Body.String() != first.Body.String() {
		t.Errorf("%d forks made, replay %s; want one fork, its answer replayed", n, again.Body)
	}
}
