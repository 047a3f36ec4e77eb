package redisstore_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// newMini returns a store over a new miniredis, its client having hooks.
func newMini(t *testing.T, opts redisstore.Options, hooks ...redis.Hook) (*miniredis.Miniredis, *redisstore.Store) {
	t.Helper()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	for _, h := range hooks {
		client.AddHook(h)
	}
	return mr, redisstore.New(client, opts)
}

// TestRetention checks that every key of a workflow, and its index entries,
// get the retention as TTL, that a commit refreshes it, and that an expired
// workflow disappears from every read.
func TestRetention(t *testing.T) {
	t.Parallel()
	const retention = time.Hour
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "rt", Retention: retention})
	now := time.Now()
	redisstore.SetClock(s, func() time.Time { return now })
	forward := func(d time.Duration) { mr.FastForward(d); now = now.Add(d) }
	slack := redisstore.RefreshSlack(retention)
	ctx := context.Background()
	st := newStepper(t, s)
	if err := st.step(ctx); err != nil {
		t.Fatal(err)
	}
	tr := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: st.cur.ID}
	if err := s.AppendTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	wfKeys := []string{"state", "msgs", "docs", "docmeta", "traces", "tracedata"}
	// The workflow's own keys get the retention from each commit; the
	// owner key and the admin listing's partition (other slots, refreshed
	// at most once per slack: see indexCache) the retention and the slack
	// from their last refresh, want2, so they always outlive them.
	checkTTL := func(when string, want, want2 time.Duration) {
		t.Helper()
		for _, k := range wfKeys {
			if got := mr.TTL("rt:{u:bench}:wf:" + st.cur.ID + ":" + k); got != want {
				t.Errorf("%s: TTL of %s = %v, want %v", when, k, got, want)
			}
		}
		if got := mr.TTL("rt:{u:bench}:workflows"); got != want {
			t.Errorf("%s: TTL of the user listing = %v, want %v", when, got, want)
		}
		if got := mr.TTL(partitionKey(t, mr, "rt", "workflows")); got != want2 || got <= want {
			t.Errorf("%s: TTL of the admin listing's partition = %v, want %v (more than %v)", when, got, want2, want)
		}
		if got := mr.TTL("rt:owner:{" + st.cur.ID + "}"); got != want2 || got <= want {
			t.Errorf("%s: TTL of the owner key = %v, want %v (more than %v)", when, got, want2, want)
		}
		if got := mr.TTL("rt:{u:bench}:running"); got != want {
			t.Errorf("%s: TTL of the user's running set = %v, want %v", when, got, want)
		}
	}
	checkTTL("after the first commits", retention, retention+slack)
	if got := mr.TTL("rt:trace:{" + tr.ID + "}"); got != retention {
		t.Errorf("TTL of the trace index entry = %v, want %v", got, retention)
	}

	forward(slack / 2)
	if err := st.step(ctx); err != nil {
		t.Fatal(err)
	}
	checkTTL("after a commit half a slack later (no refresh)", retention, retention+slack/2)
	forward(40 * time.Minute)
	if err := st.step(ctx); err != nil {
		t.Fatal(err)
	}
	checkTTL("after a commit 40 minutes later", retention, retention+slack)

	forward(retention + slack + time.Minute)
	_, err := s.GetWorkflow(ctx, st.cur.ID)
	wantKind(t, "GetWorkflow of an expired workflow", err, workflow.KindNotFound)
	_, err = s.GetTrace(ctx, tr.ID)
	wantKind(t, "GetTrace of an expired workflow", err, workflow.KindNotFound)
	list, _, err := s.ListWorkflows(ctx, "bench", workflow.Page{})
	if err != nil || len(list) != 0 {
		t.Errorf("ListWorkflows after expiry = %d workflows, %v; want none", len(list), err)
	}
	list, _, err = s.ListAll(ctx, workflow.Page{})
	if err != nil || len(list) != 0 {
		t.Errorf("ListAll after expiry = %d workflows, %v; want none", len(list), err)
	}
	if keys := mr.Keys(); len(keys) != 1 || keys[0] != partitionKey(t, mr, "rt", "running") {
		t.Errorf("keys after expiry = %v, want only the running set's partition", keys)
	}
	running, err := s.Running(ctx)
	if err != nil || len(running) != 0 {
		t.Errorf("Running after expiry = %v, %v; want none", running, err)
	}
	// The recovery scan dropped the running entry of the expired workflow:
	// nothing of it is left.
	if keys := mr.Keys(); len(keys) != 0 {
		t.Errorf("keys after expiry and a recovery scan = %v, want none", keys)
	}
	mine, err := redisstore.RunningFor(s, ctx, "bench")
	if err != nil || len(mine) != 0 {
		t.Errorf("RunningFor after expiry = %v, %v; want none", mine, err)
	}
}

// TestStaleIndexEntries plants index entries whose workflow is gone or
// belongs to another user: every reader skips them.
func TestStaleIndexEntries(t *testing.T) {
	t.Parallel()
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "st"})
	ctx := context.Background()
	st := newStepper(t, s) // user "bench", running
	gone := workflow.NewID(workflow.PrefixWorkflow)
	other := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "someone-else", Status: workflow.StatusCompleted}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: other}); err != nil {
		t.Fatal(err)
	}
	// Entries naming bench for a workflow that is gone and for another
	// user's workflow, in bench's listing and running set and in the
	// store-wide partitions.
	for _, id := range []string{gone, other.ID} {
		if _, err := mr.ZAdd("st:{u:bench}:workflows", 0, id); err != nil {
			t.Fatal(err)
		}
		if _, err := mr.ZAdd(partKey("st", id, "workflows"), 0, ref(id, "bench")); err != nil {
			t.Fatal(err)
		}
		if _, err := mr.SetAdd(partKey("st", id, "running"), ref(id, "bench")); err != nil {
			t.Fatal(err)
		}
		if _, err := mr.SetAdd("st:{u:bench}:running", id); err != nil {
			t.Fatal(err)
		}
	}
	ghost := workflow.NewID(workflow.PrefixTrace)
	if err := mr.Set("st:trace:{"+ghost+"}", ref(gone, "bench")); err != nil {
		t.Fatal(err)
	}

	list, next, err := s.ListWorkflows(ctx, "bench", workflow.Page{Limit: 1})
	if err != nil || len(list) != 1 || list[0].ID != st.cur.ID || next != "" {
		t.Errorf("ListWorkflows = %v, cursor %q, %v; want only %s and no next page", list, next, err, st.cur.ID)
	}
	// The global listing skips the entry of the workflow that is gone.
	all, next, err := s.ListAll(ctx, workflow.Page{Limit: 2})
	if want := []string{other.ID, st.cur.ID}; err != nil || !slices.Equal(listedIDs(all), want) || next != "" {
		t.Errorf("ListAll = %v, cursor %q, %v; want %v and no next page", listedIDs(all), next, err, want)
	}
	// Then, in the user's running set: a completed workflow of the user
	// whose SREM was lost, and another user's running workflow.
	idle := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "bench", Status: workflow.StatusCompleted}
	foreign := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "someone-else", Status: workflow.StatusRunning}
	for _, wf := range []*workflow.Workflow{idle, foreign} {
		if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
		if _, err := mr.SetAdd("st:{u:bench}:running", wf.ID); err != nil {
			t.Fatal(err)
		}
	}
	running, err := s.Running(ctx)
	slices.Sort(running)
	if want := slices.Sorted(slices.Values([]string{st.cur.ID, foreign.ID})); err != nil || !slices.Equal(running, want) {
		t.Errorf("Running = %v, %v; want %v", running, err, want)
	}
	mine, err := redisstore.RunningFor(s, ctx, "bench")
	if err != nil || !slices.Equal(mine, []string{st.cur.ID}) {
		t.Errorf("RunningFor(bench) = %v, %v; want [%s]", mine, err, st.cur.ID)
	}
	_, err = s.GetTrace(ctx, ghost)
	wantKind(t, "GetTrace through a stale index entry", err, workflow.KindNotFound)

	// The readers pruned the entries naming bench for workflows bench has
	// not (gone, or another user's); the live ones stay.
	listing, _ := mr.ZMembers("st:{u:bench}:workflows")
	slices.Sort(listing)
	if want := slices.Sorted(slices.Values([]string{st.cur.ID, idle.ID})); !slices.Equal(listing, want) {
		t.Errorf("bench's listing after the reads = %v, want %v", listing, want)
	}
	for _, id := range []string{gone, other.ID} {
		if left, _ := mr.ZMembers(partKey("st", id, "workflows")); slices.Contains(left, ref(id, "bench")) {
			t.Errorf("admin listing partition after the reads = %q, want %q pruned", left, ref(id, "bench"))
		}
		if left, _ := mr.Members(partKey("st", id, "running")); slices.Contains(left, ref(id, "bench")) {
			t.Errorf("running partition after the reads = %q, want %q pruned", left, ref(id, "bench"))
		}
	}
	if left, _ := mr.ZMembers(partKey("st", other.ID, "workflows")); !slices.Contains(left, ref(other.ID, "someone-else")) {
		t.Errorf("admin listing partition after the reads = %q, want the live %q kept", left, ref(other.ID, "someone-else"))
	}
	if left, _ := mr.Members("st:{u:bench}:running"); slices.Contains(left, gone) || slices.Contains(left, foreign.ID) {
		t.Errorf("bench's running set after the reads = %q, want the entries of workflows bench has not pruned", left)
	}
}

// TestBracedIDs checks that an id that would break the shared hash tag is
// refused on write and unknown on read.
func TestBracedIDs(t *testing.T) {
	t.Parallel()
	_, s := newMini(t, redisstore.Options{})
	ctx := context.Background()
	_, _, err := s.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: "wf}{x", UserID: "u"}})
	wantKind(t, "Commit of a braced id", err, workflow.KindInvalid)
	_, err = s.GetWorkflow(ctx, "wf}{x")
	wantKind(t, "GetWorkflow of a braced id", err, workflow.KindNotFound)
	// A NUL byte would split a ref (id NUL user) in the wrong place.
	_, _, err = s.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: "wf\x00x", UserID: "u"}})
	wantKind(t, "Commit of an id with a NUL byte", err, workflow.KindInvalid)
	_, err = s.GetWorkflow(ctx, "wf\x00x")
	wantKind(t, "GetWorkflow of an id with a NUL byte", err, workflow.KindNotFound)
}

// ref is a workflow's entry in the store-wide indexes (see the package
// doc).
func ref(id, user string) string { return id + "\x00" + url.QueryEscape(user) }

// partKey names the index partition (name "workflows" or "running") that
// holds workflow id's entry.
func partKey(prefix, id, name string) string {
	return prefix + ":{i" + strconv.Itoa(redisstore.PartitionOf(id)) + "}:" + name
}

// partitionKey returns the one key of the store-wide index partitions
// named name ("workflows" or "running") under prefix, failing t unless
// exactly one exists.
func partitionKey(t *testing.T, mr *miniredis.Miniredis, prefix, name string) string {
	t.Helper()
	var found []string
	for _, k := range mr.Keys() {
		if strings.HasPrefix(k, prefix+":{i") && strings.HasSuffix(k, "}:"+name) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		t.Fatalf("partitions of %s: %v, want exactly one", name, found)
	}
	return found[0]
}

// TestRunningForKeys pins the name of each user's running set: the user id
// query-escaped in the hash tag, so braces, colons and glob characters
// cannot change the key's hash slot, reach another key or widen a SCAN
// pattern — and a commit leaving the running status empties (removes) the
// set.
func TestRunningForKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ user, key string }{
		{"alice", "lk:{u:alice}:running"},
		{"team:{ops}*", "lk:{u:team%3A%7Bops%7D%2A}:running"},
		{"a b+c/d?e[f]", "lk:{u:a+b%2Bc%2Fd%3Fe%5Bf%5D}:running"},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			t.Parallel()
			mr, s := newMini(t, redisstore.Options{KeyPrefix: "lk"})
			ctx := context.Background()
			wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: tc.user, Status: workflow.StatusRunning}
			cur, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf})
			if err != nil {
				t.Fatal(err)
			}
			members, err := mr.Members(tc.key)
			if err != nil || !slices.Equal(members, []string{wf.ID}) {
				t.Fatalf("members of %s = %v, %v; want [%s] (keys: %v)", tc.key, members, err, wf.ID, mr.Keys())
			}
			next := cur.Clone()
			next.Status = workflow.StatusCompleted
			if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: cur.Version}); err != nil {
				t.Fatal(err)
			}
			if mr.Exists(tc.key) {
				t.Errorf("%s still exists after the user's only running workflow completed", tc.key)
			}
		})
	}
}

func wantKind(t *testing.T, what string, err error, want workflow.Kind) {
	t.Helper()
	if got := workflow.KindOf(err); got != want {
		t.Errorf("%s: error kind %q (%v), want %q", what, got, err, want)
	}
}

// listedIDs returns the ids of a listing, in order.
func listedIDs(list []*workflow.Workflow) []string {
	ids := make([]string, len(list))
	for i, wf := range list {
		ids[i] = wf.ID
	}
	return ids
}
