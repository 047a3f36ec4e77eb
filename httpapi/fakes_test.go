package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/metrics"
	"github.com/twostep/twostep/workflow"
)

// fakeEngine is a hand-written Engine whose methods call the function
// fields; an unset field fails the test if called.
type fakeEngine struct {
	t          *testing.T
	mu         sync.Mutex
	calls      []string
	CreateFn   func(engine.NewWorkflow) (*workflow.Workflow, error)
	StartFn    func(userID, id string, in engine.NewRound) (*workflow.Workflow, error)
	StopFn     func(userID, id string) (*workflow.Workflow, error)
	ResumeFn   func(userID, id string) (*workflow.Workflow, error)
	GetFn      func(userID, id string) (*workflow.Workflow, error)
	DeleteFn   func(userID, id string) error
	DecideFn   func(userID, id, approvalID string, d workflow.Decision) (*workflow.Workflow, error)
	ForkFn     func(userID, id string, req engine.ForkRequest) (*workflow.Workflow, error)
	unexpected func(string)
}

func newFakeEngine(t *testing.T) *fakeEngine {
	return &fakeEngine{t: t, unexpected: func(m string) { t.Errorf("unexpected engine call %s", m) }}
}

func (f *fakeEngine) record(m string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, m)
}

func (f *fakeEngine) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeEngine) Create(_ context.Context, in engine.NewWorkflow) (*workflow.Workflow, error) {
	f.record("Create")
	if f.CreateFn == nil {
		f.unexpected("Create")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.CreateFn(in)
}

func (f *fakeEngine) StartRound(_ context.Context, userID, id string, in engine.NewRound) (*workflow.Workflow, error) {
	f.record("StartRound")
	if f.StartFn == nil {
		f.unexpected("StartRound")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.StartFn(userID, id, in)
}

func (f *fakeEngine) Stop(_ context.Context, userID, id string) (*workflow.Workflow, error) {
	f.record("Stop")
	if f.StopFn == nil {
		f.unexpected("Stop")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.StopFn(userID, id)
}

func (f *fakeEngine) Resume(_ context.Context, userID, id string) (*workflow.Workflow, error) {
	f.record("Resume")
	if f.ResumeFn == nil {
		f.unexpected("Resume")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.ResumeFn(userID, id)
}

func (f *fakeEngine) Get(_ context.Context, userID, id string) (*workflow.Workflow, error) {
	f.record("Get")
	if f.GetFn == nil {
		f.unexpected("Get")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.GetFn(userID, id)
}

func (f *fakeEngine) Delete(_ context.Context, userID, id string) error {
	f.record("Delete")
	if f.DeleteFn == nil {
		f.unexpected("Delete")
		return workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.DeleteFn(userID, id)
}

func (f *fakeEngine) Decide(_ context.Context, userID, id, approvalID string, d workflow.Decision) (*workflow.Workflow, error) {
	f.record("Decide")
	if f.DecideFn == nil {
		f.unexpected("Decide")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.DecideFn(userID, id, approvalID, d)
}

func (f *fakeEngine) Standing(context.Context, string) ([]workflow.StandingApproval, error) {
	f.record("Standing")
	return []workflow.StandingApproval{}, nil
}

func (f *fakeEngine) RevokeStanding(context.Context, string, string) error {
	f.record("RevokeStanding")
	return workflow.Errorf(workflow.KindNotFound, "no standing approval")
}

func (f *fakeEngine) Fork(_ context.Context, userID, id string, req engine.ForkRequest) (*workflow.Workflow, error) {
	f.record("Fork")
	if f.ForkFn == nil {
		f.unexpected("Fork")
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected")
	}
	return f.ForkFn(userID, id, req)
}

// fakeStore serves the read paths from maps. Write methods are not used by
// httpapi and fail loudly. onGet, when set, runs before every GetWorkflow
// (the events test uses it to advance the workflow).
type fakeStore struct {
	mu      sync.Mutex
	wfs     map[string]*workflow.Workflow
	msgs    map[string][]workflow.Message
	docs    map[string]workflow.DocumentContent
	pingErr error
	// pingStalls makes Ping block until its context ends, like a stalled
	// Redis.
	pingStalls bool
	listErr    error
	onGet      func(s *fakeStore, id string)
	gets       int
}

func newFakeStore() *fakeStore {
	return &fakeStore{wfs: map[string]*workflow.Workflow{}, msgs: map[string][]workflow.Message{}, docs: map[string]workflow.DocumentContent{}}
}

var _ workflow.Store = (*fakeStore)(nil)

func (s *fakeStore) put(w *workflow.Workflow, msgs ...workflow.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(w, msgs...)
}

func (s *fakeStore) putLocked(w *workflow.Workflow, msgs ...workflow.Message) {
	s.wfs[w.ID] = w.Clone()
	for _, m := range msgs {
		m.WorkflowID = w.ID
		m.Seq = int64(len(s.msgs[w.ID]) + 1)
		s.msgs[w.ID] = append(s.msgs[w.ID], m)
	}
}

func (s *fakeStore) Commit(context.Context, workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	return nil, nil, workflow.Errorf(workflow.KindInternal, "fakeStore: Commit not supported")
}

func (s *fakeStore) GetWorkflow(_ context.Context, id string) (*workflow.Workflow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	if s.onGet != nil {
		s.onGet(s, id)
	}
	w, ok := s.wfs[id]
	if !ok {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	return w.Clone(), nil
}

func (s *fakeStore) ListWorkflows(_ context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listErr != nil {
		return nil, "", s.listErr
	}
	var out []*workflow.Workflow
	for _, w := range s.wfs {
		if w.UserID == userID {
			out = append(out, w.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, "", nil
}

// ListAll lists every user's workflows newest first, in one page.
func (s *fakeStore) ListAll(context.Context, workflow.Page) ([]*workflow.Workflow, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listErr != nil {
		return nil, "", s.listErr
	}
	out := make([]*workflow.Workflow, 0, len(s.wfs))
	for _, w := range s.wfs {
		out = append(out, w.Clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, "", nil
}

func (s *fakeStore) DeleteWorkflow(context.Context, string) error {
	return workflow.Errorf(workflow.KindInternal, "fakeStore: DeleteWorkflow not supported")
}

func (s *fakeStore) Messages(_ context.Context, id string, after int64, limit int) ([]workflow.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []workflow.Message
	for _, m := range s.msgs[id] {
		if m.Seq > after && (limit <= 0 || len(out) < limit) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (s *fakeStore) DocumentContent(_ context.Context, wfID, docID string) (workflow.DocumentContent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[docID]
	if !ok || d.WorkflowID != wfID {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindNotFound, "document %s not found", docID)
	}
	return d, nil
}

func (s *fakeStore) AppendTrace(context.Context, workflow.Trace) error { return nil }
func (s *fakeStore) Traces(context.Context, string) ([]workflow.Trace, error) {
	return nil, nil
}
func (s *fakeStore) GetTrace(context.Context, string) (workflow.Trace, error) {
	return workflow.Trace{}, workflow.ErrNotFound
}
func (s *fakeStore) Ping(ctx context.Context) error {
	if s.pingStalls {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.pingErr
}
func (s *fakeStore) Running(context.Context) ([]string, error) { return nil, nil }
func (s *fakeStore) ClaimRound(context.Context, string, string, time.Duration) (int64, error) {
	return 1, nil
}
func (s *fakeStore) ReleaseRound(context.Context, string, string) error { return nil }

// fakeActions lists fixed actions.
type fakeActions []workflow.ActionSpec

func (a fakeActions) Actions() []workflow.ActionSpec { return a }

// Tokens of the test users.
const (
	aliceToken = "tok-alice-0123456789"
	bobToken   = "tok-bob-0123456789"
	adminToken = "tok-admin-0123456789"
	// metricsToken is the scraper's token (GATEWAY_METRICS_TOKEN).
	metricsToken = "tok-metrics-0123456789"
)

type testEnv struct {
	srv     *Server
	engine  *fakeEngine
	store   *fakeStore
	logs    *syncBuffer
	metrics *metrics.Metrics
	changes *watchedChanges
}

// watchedChanges is a changefeed.Feed that counts the open subscriptions
// of each workflow, so a test can publish once a request watches.
type watchedChanges struct {
	*changefeed.Feed
	mu   sync.Mutex
	open map[string]int
}

func (w *watchedChanges) Subscribe(id string) (<-chan workflow.Change, func()) {
	ch, cancel := w.Feed.Subscribe(id)
	w.mu.Lock()
	w.open[id]++
	w.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			cancel()
			w.mu.Lock()
			w.open[id]--
			w.mu.Unlock()
		})
	}
}

// watching returns how many subscriptions of id are open.
func (w *watchedChanges) watching(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open[id]
}

func newTestEnv(t *testing.T, mod func(*Options)) *testEnv {
	t.Helper()
	auth, err := NewAuthenticator(
		[]Credential{{UserID: "alice", Token: aliceToken}, {UserID: "bob", Token: bobToken}},
		[]Credential{{UserID: "root", Token: adminToken}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{engine: newFakeEngine(t), store: newFakeStore(), logs: &syncBuffer{}, metrics: metrics.New(),
		changes: &watchedChanges{Feed: changefeed.New(), open: map[string]int{}}}
	opts := Options{
		Engine: env.engine, Reads: engine.NewReader(env.store), Store: env.store, Auth: auth, Metrics: env.metrics, ModelName: "scripted/test",
		MetricsToken: &Credential{UserID: "metrics", Token: metricsToken},
		Actions: fakeActions{{Name: "document.generate", Description: "Make a document",
			Parameters: json.RawMessage(`{"type":"object","properties":{"fileName":{"type":"string"}}}`),
			Effect:     workflow.EffectWrite, Documents: workflow.DocumentsNone}},
		Logger:    zerolog.New(env.logs),
		EventPoll: time.Millisecond, Heartbeat: time.Hour, Changes: env.changes,
	}
	if mod != nil {
		mod(&opts)
	}
	env.srv, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// do sends a request with the given token ("" for none) and returns the
// recorded response.
func (e *testEnv) do(t *testing.T, method, path, token string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	e.srv.Routes().ServeHTTP(rec, req)
	return rec
}

// problem decodes a problem+json answer, failing the test when the answer
// is not one.
func problem(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (status %d, body %s)", ct, rec.Code, rec.Body)
	}
	var p map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, rec.Body)
	}
	if int(p["status"].(float64)) != rec.Code {
		t.Errorf("problem status %v != HTTP status %d", p["status"], rec.Code)
	}
	return p
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testWorkflow(user string, status workflow.Status) *workflow.Workflow {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	return &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact,
		Status: status, Round: 1, Step: 1, MaxSteps: 10, CreatedAt: now, UpdatedAt: now,
		Version: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect},
	}
}

var _ = http.StatusOK

// doHeader sends a bodiless request with a raw Authorization header.
func (e *testEnv) doHeader(t *testing.T, method, path, authorization string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	e.srv.Routes().ServeHTTP(rec, req)
	return rec
}

// doWith sends a bodiless request with a token and extra headers.
func (e *testEnv) doWith(t *testing.T, method, path, token string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.srv.Routes().ServeHTTP(rec, req)
	return rec
}
