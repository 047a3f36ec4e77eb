package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// roundTrips is a go-redis hook that counts round trips: one per command
// sent alone, one per pipeline.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// countedMiniredis is a fresh miniredis and a client of it whose round
// trips counter counts.
func countedMiniredis(t *testing.T) (*miniredis.Miniredis, *redis.Client, *roundTrips) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	counter := &roundTrips{}
	client.AddHook(counter)
	return mr, client, counter
}

// stepper commits steps of one running workflow, as the engine does,
// each with traces traces.
type stepper struct {
	store  *redisstore.Store
	cur    *workflow.Workflow
	traces int
}

func newStepper(tb testing.TB, s *redisstore.Store) *stepper {
	tb.Helper()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "bench", Mode: workflow.ModeReact, Status: workflow.StatusRunning}
	cur, _, err := s.Commit(context.Background(), workflow.Commit{Workflow: wf})
	if err != nil {
		tb.Fatal(err)
	}
	return &stepper{store: s, cur: cur}
}

var stepContent = []byte("a small action output, about one line of text")

// step commits one step: the state, one action message, one small document.
func (st *stepper) step(ctx context.Context) error {
	next := st.cur.Clone()
	next.Step++
	d := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), Name: "out.txt", MimeType: "text/plain"}, Content: stepContent}
	m := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess, Summary: "ok", Documents: []workflow.Document{d.Document}}
	var traces []workflow.Trace
	for i := range st.traces {
		traces = append(traces, workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: next.ID, Step: next.Step, Attempt: i + 1})
	}
	cur, _, err := st.store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: st.cur.Version, Messages: []workflow.Message{m}, Documents: []workflow.DocumentContent{d}, Traces: traces})
	if err != nil {
		return err
	}
	st.cur = cur
	return nil
}

// TestCommitStepIsOneRoundTrip pins the cost of a step commit: once the
// script is cached, one pipeline and nothing else.
func TestCommitStepIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	_, client, counter := countedMiniredis(t)
	st := newStepper(t, redisstore.New(client, redisstore.Options{}))
	ctx := context.Background()
	if err := st.step(ctx); err != nil { // caches the script
		t.Fatal(err)
	}
	before := counter.n.Load()
	for range 10 {
		if err := st.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.n.Load() - before; got != 10 {
		t.Errorf("10 step commits took %d round trips, want 10", got)
	}
}

// TestCommitStepPastTraceCapIsOneRoundTrip: a step commit that drops
// traces past the cap stays one round trip — the dropped traces' index
// entries are deleted by the next pipeline — and once the store is closed
// only the kept traces' entries are left.
func TestCommitStepPastTraceCapIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	mr, client, counter := countedMiniredis(t)
	const traceCap = 3
	s := redisstore.New(client, redisstore.Options{TraceCap: traceCap})
	st := newStepper(t, s)
	st.traces = 2
	ctx := context.Background()
	if err := st.step(ctx); err != nil { // caches the script
		t.Fatal(err)
	}
	before := counter.n.Load()
	for range 10 {
		if err := st.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.n.Load() - before; got != 10 {
		t.Errorf("10 step commits past the trace cap took %d round trips, want 10", got)
	}
	traces, err := s.Traces(ctx, st.cur.ID)
	if err != nil || len(traces) != traceCap {
		t.Fatalf("kept %d traces (%v), want the cap %d", len(traces), err, traceCap)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries := 0
	for _, k := range mr.Keys() {
		if strings.HasPrefix(k, redisstore.DefaultKeyPrefix+":trace:") {
			entries++
		}
	}
	if entries != traceCap {
		t.Errorf("%d trace index entries left after Close, want the %d kept traces'", entries, traceCap)
	}
	for _, tr := range traces {
		if _, err := s.GetTrace(ctx, tr.ID); err != nil {
			t.Errorf("GetTrace(%s) of a kept trace: %v", tr.ID, err)
		}
	}
}

// TestCommitStepRoundTripsOnCluster pins the cost of a step commit on a
// Redis Cluster: one pipeline, which the cluster client sends as at most
// two requests at once (the running-set partition's node and the user
// slot's node, maybe the same), counted on every node's connection.
func TestCommitStepRoundTripsOnCluster(t *testing.T) {
	t.Parallel()
	url := clusterURL(t)
	o, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatal(err)
	}
	perNode := &roundTrips{}
	o.NewClient = func(opt *redis.Options) *redis.Client {
		c := redis.NewClient(opt)
		c.AddHook(perNode)
		return c
	}
	client := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = client.Close() })
	counter := &roundTrips{}
	client.AddHook(counter)
	st := newStepper(t, redisstore.New(client, redisstore.Options{KeyPrefix: uniquePrefix(t, client)}))
	ctx := context.Background()
	if err := st.step(ctx); err != nil { // caches the script
		t.Fatal(err)
	}
	before, beforeNodes := counter.n.Load(), perNode.n.Load()
	for range 10 {
		if err := st.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.n.Load() - before; got != 10 {
		t.Errorf("10 step commits took %d pipelines, want 10", got)
	}
	if got := perNode.n.Load() - beforeNodes; got < 10 || got > 20 {
		t.Errorf("10 step commits sent %d requests to the nodes, want 10 to 20", got)
	}
}

// TestClaimRoundLoadIsOneRoundTrip pins the cost of the claim that starts
// a run: once the script is cached, the claim, the workflow and its
// messages come in one round trip.
func TestClaimRoundLoadIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	_, client, counter := countedMiniredis(t)
	s := redisstore.New(client, redisstore.Options{})
	st := newStepper(t, s)
	ctx := context.Background()
	for range 3 {
		if err := st.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ClaimRoundLoad(ctx, st.cur.ID, "a", time.Minute); err != nil { // caches the script
		t.Fatal(err)
	}
	before := counter.n.Load()
	for range 10 {
		c, err := s.ClaimRoundLoad(ctx, st.cur.ID, "a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if c.Fence != 1 || c.Workflow.Version != st.cur.Version || len(c.Messages) != 3 {
			t.Fatalf("ClaimRoundLoad = fence %d, version %d, %d messages; want 1, %d, 3", c.Fence, c.Workflow.Version, len(c.Messages), st.cur.Version)
		}
	}
	if got := counter.n.Load() - before; got != 10 {
		t.Errorf("10 claims with their reads took %d round trips, want 10", got)
	}
}

// TestListAllPageRoundTrips pins the cost of an admin listing page: one
// range read of the global listing and one pipeline of state reads,
// however many users and workflows the store holds.
func TestListAllPageRoundTrips(t *testing.T) {
	t.Parallel()
	_, client, counter := countedMiniredis(t)
	s := redisstore.New(client, redisstore.Options{})
	ctx := context.Background()
	for i := range 40 {
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: fmt.Sprintf("user-%d", i%13), Status: workflow.StatusCompleted}
		if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
	}
	cursor := ""
	for page := range 4 {
		before := counter.n.Load()
		list, next, err := s.ListAll(ctx, workflow.Page{Limit: 10, Cursor: cursor})
		if err != nil || len(list) != 10 {
			t.Fatalf("page %d: %d workflows, %v; want 10", page, len(list), err)
		}
		if got := counter.n.Load() - before; got != 2 {
			t.Errorf("page %d took %d round trips, want 2", page, got)
		}
		if (next == "") != (page == 3) {
			t.Errorf("page %d: cursor %q", page, next)
		}
		cursor = next
	}
}

// BenchmarkCommitStep measures a step commit and its round trips: pipelines
// per step, and on the cluster also the requests they became, one per node
// reached (sent at once).
func BenchmarkCommitStep(b *testing.B) {
	b.Run("miniredis", func(b *testing.B) {
		mr := miniredis.RunT(b)
		benchCommitStep(b, redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	})
	b.Run("redis", func(b *testing.B) {
		url := redisURL(b)
		o, err := redis.ParseURL(url)
		if err != nil {
			b.Fatal(err)
		}
		benchCommitStep(b, redis.NewClient(o), nil)
	})
	b.Run("cluster", func(b *testing.B) {
		o, err := redis.ParseClusterURL(clusterURL(b))
		if err != nil {
			b.Fatal(err)
		}
		perNode := &roundTrips{}
		o.NewClient = func(opt *redis.Options) *redis.Client {
			c := redis.NewClient(opt)
			c.AddHook(perNode)
			return c
		}
		benchCommitStep(b, redis.NewClusterClient(o), perNode)
	})
}

func benchCommitStep(b *testing.B, client redis.UniversalClient, perNode *roundTrips) {
	b.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()
	prefix := uniquePrefix(b, client)
	counter := &roundTrips{}
	client.AddHook(counter)
	st := newStepper(b, redisstore.New(client, redisstore.Options{KeyPrefix: prefix}))
	if err := st.step(ctx); err != nil {
		b.Fatal(err)
	}
	counter.n.Store(0)
	if perNode != nil {
		perNode.n.Store(0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := st.step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.n.Load())/float64(b.N), "roundtrips/op")
	if perNode != nil {
		b.ReportMetric(float64(perNode.n.Load())/float64(b.N), "node-requests/op")
	}
}

// TestClaimRoundLoadGivesBackTheLeaseOfACorruptState: a claim whose
// workflow state does not decode answers KindInternal and holds no lease
// (another owner can claim the round at once), as the reads after a
// plain claim do when they fail.
func TestClaimRoundLoadGivesBackTheLeaseOfACorruptState(t *testing.T) {
	t.Parallel()
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "tc"})
	ctx := context.Background()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, MaxSteps: 3}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	corrupted := 0
	for _, k := range mr.Keys() {
		if strings.HasSuffix(k, wf.ID+":state") {
			mr.HSet(k, "json", "{not json")
			corrupted++
		}
	}
	if corrupted != 1 {
		t.Fatalf("found %d state keys of %s in %v", corrupted, wf.ID, mr.Keys())
	}
	c, err := s.ClaimRoundLoad(ctx, wf.ID, "a", time.Minute)
	if workflow.KindOf(err) != workflow.KindInternal || c.Fence != 0 || c.Workflow != nil || c.Messages != nil {
		t.Fatalf("ClaimRoundLoad of a corrupt state = %d, %v, %d messages, %v; want 0, nil, none, internal", c.Fence, c.Workflow, len(c.Messages), err)
	}
	if fence, err := s.ClaimRound(ctx, wf.ID, "b", time.Minute); err != nil || fence == 0 {
		t.Errorf("ClaimRound(b) after the failed load = %d, %v; want the lease (a gave it back)", fence, err)
	}
}
