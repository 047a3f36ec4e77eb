package redisstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// sentNames flattens the pipelines rec recorded since its last take into
// the names of their commands.
func sentNames(rec *pipelines) []string {
	var names []string
	for _, p := range rec.take() {
		names = append(names, p...)
	}
	return names
}

// TestCommitSendsIndexWritesOnce: within a round (one fence), only the
// round's first commit adds the store-wide running entry, and the owner
// key's and the listing partition's TTLs are refreshed once per slack; a
// later commit of the round sends its script alone. A round that ends
// takes the entry away and the next round (a new fence) adds it again, so
// the recovery scan finds every running round.
func TestCommitSendsIndexWritesOnce(t *testing.T) {
	t.Parallel()
	names := &pipelines{}
	const retention = time.Hour
	mr, s := newMini(t, redisstore.Options{Retention: retention}, names)
	now := time.Now()
	redisstore.SetClock(s, func() time.Time { return now })
	ctx := context.Background()
	wf, _, err := s.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "u1", Mode: workflow.ModeReact, Status: workflow.StatusRunning}})
	if err != nil {
		t.Fatal(err)
	}
	round := func(name string) {
		t.Helper()
		fence, err := s.ClaimRound(ctx, wf.ID, "owner-"+name, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			next := wf.Clone()
			next.Step++
			sentNames(names)
			if wf, _, err = s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Fence: fence}); err != nil {
				t.Fatal(err)
			}
			sent := sentNames(names)
			if added := slices.Contains(sent, "sadd"); added != (i == 0) {
				t.Errorf("%s, commit %d: sent %v; want SADD of the running entry only in the round's first commit", name, i+1, sent)
			}
			if slices.Contains(sent, "pexpire") {
				t.Errorf("%s, commit %d: sent %v; the TTLs were refreshed less than a slack ago", name, i+1, sent)
			}
			if ids, err := s.Running(ctx); err != nil || !slices.Equal(ids, []string{wf.ID}) {
				t.Fatalf("%s, commit %d: Running = %v, %v; want the workflow", name, i+1, ids, err)
			}
		}
		done := wf.Clone()
		done.Status = workflow.StatusCompleted
		if wf, _, err = s.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: wf.Version, Fence: fence}); err != nil {
			t.Fatal(err)
		}
		if ids, err := s.Running(ctx); err != nil || len(ids) != 0 {
			t.Fatalf("%s ended: Running = %v, %v; want none", name, ids, err)
		}
		if err := s.ReleaseRound(ctx, wf.ID, "owner-"+name); err != nil {
			t.Fatal(err)
		}
		again := wf.Clone()
		again.Status, again.Round = workflow.StatusRunning, again.Round+1
		if wf, _, err = s.Commit(ctx, workflow.Commit{Workflow: again, ExpectedVersion: wf.Version}); err != nil {
			t.Fatal(err)
		}
	}
	round("round 1")
	round("round 2")

	mr.FastForward(redisstore.RefreshSlack(retention))
	now = now.Add(redisstore.RefreshSlack(retention))
	next := wf.Clone()
	sentNames(names)
	if _, _, err = s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version}); err != nil {
		t.Fatal(err)
	}
	if sent := sentNames(names); !slices.Contains(sent, "pexpire") {
		t.Errorf("a commit a slack later sent %v; want the TTLs refreshed", sent)
	}
}

// TestIndexWritesComeBack: what the cache skips is not lost for good. A
// running entry lost another way (its shard failed over without it) is
// added again by the round's first commit after runningRefresh, so the
// recovery scan finds the workflow again; and a workflow created again
// (a caller choosing ids) after another instance deleted it gets the
// owner key's and the listing partition's long TTLs at once, though this
// instance refreshed them a moment before.
func TestIndexWritesComeBack(t *testing.T) {
	t.Parallel()
	const retention = time.Hour
	mr, a := newMini(t, redisstore.Options{KeyPrefix: "ib", Retention: retention})
	b := redisstore.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), redisstore.Options{KeyPrefix: "ib", Retention: retention})
	now := time.Now()
	redisstore.SetClock(a, func() time.Time { return now })
	ctx := context.Background()
	id := workflow.NewID(workflow.PrefixWorkflow)
	create := func() *workflow.Workflow {
		t.Helper()
		wf, _, err := a.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: id, UserID: "u1", Mode: workflow.ModeReact, Status: workflow.StatusRunning}})
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	wf := create()
	fence, err := a.ClaimRound(ctx, id, "owner", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	commit := func() {
		t.Helper()
		next := wf.Clone()
		next.Step++
		if wf, _, err = a.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Fence: fence}); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	part := partitionKey(t, mr, "ib", "running")
	mr.Del(part) // the entry is lost
	commit()
	now = now.Add(5 * time.Second)
	commit()
	if ids, err := a.Running(ctx); err != nil || !slices.Equal(ids, []string{id}) {
		t.Errorf("Running after the entry was lost and the round went on = %v, %v; want the workflow", ids, err)
	}

	// Another instance deletes it; this one creates it again at once.
	if err := b.DeleteWorkflow(ctx, id); err != nil {
		t.Fatal(err)
	}
	create()
	slack := redisstore.RefreshSlack(retention)
	if got := mr.TTL("ib:owner:{" + id + "}"); got != retention+slack {
		t.Errorf("TTL of the new owner key = %v, want %v", got, retention+slack)
	}
	if got := mr.TTL(partitionKey(t, mr, "ib", "workflows")); got != retention+slack {
		t.Errorf("TTL of the listing partition made anew = %v, want %v", got, retention+slack)
	}
}
