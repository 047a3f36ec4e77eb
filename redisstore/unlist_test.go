package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// failSRem is a go-redis hook that fails every SREM, and every pipeline
// holding one, while armed, like a connection lost right after a script ran.
type failSRem struct{ armed atomic.Bool }

func (h *failSRem) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failSRem) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.armed.Load() && strings.EqualFold(cmd.Name(), "srem") {
			err := errors.New("connection reset")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *failSRem) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if h.armed.Load() && strings.EqualFold(c.Name(), "srem") {
				err := errors.New("connection reset")
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// createRunning stores a new running workflow of alice's.
func createRunning(t *testing.T, s *redisstore.Store) *workflow.Workflow {
	t.Helper()
	now := time.Now().UTC()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, CreatedAt: now, UpdatedAt: now}
	stored, _, err := s.Commit(context.Background(), workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// A commit that ends a round is applied by its script; failing to take the
// id out of the running sets afterwards (readers skip such stale entries)
// must not report the applied commit as failed, or callers act as if
// nothing was written: Stop answers an error for a stop that took effect,
// and the engine treats a committed step as lost.
func TestCommitEndingARoundSucceedsWhenTheRunningSetsLag(t *testing.T) {
	t.Parallel()
	hook := &failSRem{}
	_, s := newMini(t, redisstore.Options{KeyPrefix: "ts"}, hook)
	ctx := context.Background()
	stored := createRunning(t, s)
	hook.armed.Store(true)
	next := stored.Clone()
	next.Status, next.StopReason = workflow.StatusStopped, workflow.StopStopped
	got, _, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: stored.Version})
	if err != nil {
		t.Fatalf("Commit: %v, want the applied commit reported as applied", err)
	}
	if got.Status != workflow.StatusStopped || got.Version != stored.Version+1 {
		t.Errorf("Commit returned %s at version %d, want stopped at %d", got.Status, got.Version, stored.Version+1)
	}
	hook.armed.Store(false)
	if ids, err := s.RunningFor(ctx, "alice"); err != nil || len(ids) != 0 {
		t.Errorf("RunningFor = %v, %v; want none (the stale entry is skipped)", ids, err)
	}
	if ids, err := s.Running(ctx); err != nil || len(ids) != 0 {
		t.Errorf("Running = %v, %v; want none (the stale entry is skipped)", ids, err)
	}
}

// DeleteWorkflow's script removes the workflow; failing to clean its index
// entries afterwards (readers skip them) must not report the delete as
// failed.
func TestDeleteSucceedsWhenTheIndexCleanupFails(t *testing.T) {
	t.Parallel()
	hook := &failSRem{}
	_, s := newMini(t, redisstore.Options{KeyPrefix: "ts"}, hook)
	ctx := context.Background()
	wf := createRunning(t, s)
	hook.armed.Store(true)
	if err := s.DeleteWorkflow(ctx, wf.ID); err != nil {
		t.Fatalf("DeleteWorkflow: %v, want the applied delete reported as applied", err)
	}
	hook.armed.Store(false)
	if _, err := s.GetWorkflow(ctx, wf.ID); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("GetWorkflow after delete: %v, want KindNotFound", err)
	}
	if list, _, err := s.ListWorkflows(ctx, "alice", workflow.Page{}); err != nil || len(list) != 0 {
		t.Errorf("ListWorkflows = %d workflows, %v; want none (stale entries skipped)", len(list), err)
	}
	if ids, err := s.RunningFor(ctx, "alice"); err != nil || len(ids) != 0 {
		t.Errorf("RunningFor = %v, %v; want none", ids, err)
	}
}

// A round that ends under its fence leaves the running partition with the
// release of its lease, in the release's round trip; a commit that makes
// the workflow run again before that release keeps its entry; an API
// commit (no fence) ending a round takes the entry out at once.
func TestEndedRoundLeavesTheRunningSetWithItsRelease(t *testing.T) {
	t.Parallel()
	counter := &roundTrips{}
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "ur"}, counter)
	ctx := context.Background()
	listed := func(id string) bool {
		t.Helper()
		ok, err := mr.IsMember(partKey("ur", id, "running"), ref(id, "alice"))
		if err != nil && !strings.Contains(err.Error(), "no such key") {
			t.Fatal(err)
		}
		return ok
	}
	start := func() (*workflow.Workflow, int64) {
		t.Helper()
		stored := createRunning(t, s)
		fence, err := s.ClaimRound(ctx, stored.ID, "me", time.Minute)
		if err != nil || fence == 0 {
			t.Fatalf("ClaimRound = %d, %v", fence, err)
		}
		return stored, fence
	}
	end := func(cur *workflow.Workflow, fence int64) *workflow.Workflow {
		t.Helper()
		next := cur.Clone()
		next.Status, next.StopReason = workflow.StatusCompleted, workflow.StopCompleted
		done, _, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: cur.Version, Fence: fence})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	warm, _ := start() // Redis caches the scripts
	if err := s.ReleaseRound(ctx, warm.ID, "me"); err != nil {
		t.Fatal(err)
	}
	wf, fence := start()
	before := counter.n.Load()
	done := end(wf, fence)
	if n := counter.n.Load() - before; n != 1 {
		t.Errorf("the ending commit took %d round trips, want 1", n)
	}
	if !listed(wf.ID) {
		t.Fatalf("the entry left before the release")
	}
	before = counter.n.Load()
	if err := s.ReleaseRound(ctx, wf.ID, "me"); err != nil {
		t.Fatal(err)
	}
	if n := counter.n.Load() - before; n != 1 {
		t.Errorf("the release took %d round trips, want 1", n)
	}
	if listed(wf.ID) {
		t.Errorf("the entry is still in the running partition after the release")
	}
	if mr.Exists("ur:{u:alice}:wf:" + wf.ID + ":lease") {
		t.Errorf("the lease is still held after the release")
	}

	// A new round begins (an API commit) before the old round's release:
	// the release must leave the new round's entry.
	again := done.Clone()
	again.Status, again.StopReason, again.Round = workflow.StatusRunning, "", 2
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: again, ExpectedVersion: done.Version}); err != nil {
		t.Fatal(err)
	}
	wf2, fence2 := start()
	ended := end(wf2, fence2)
	again = ended.Clone()
	again.Status, again.StopReason = workflow.StatusRunning, ""
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: again, ExpectedVersion: ended.Version}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRound(ctx, wf2.ID, "me"); err != nil {
		t.Fatal(err)
	}
	if !listed(wf2.ID) {
		t.Errorf("the release of the ended round took out the entry of the round that began after it")
	}
	if ids, err := s.Running(ctx); err != nil || !slices.Contains(ids, wf2.ID) {
		t.Errorf("Running = %v, %v; want %s in it", ids, err, wf2.ID)
	}

	// An API commit ends a round at once.
	wf3, _ := start()
	stopped := wf3.Clone()
	stopped.Status, stopped.StopReason = workflow.StatusStopped, workflow.StopStopped
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: stopped, ExpectedVersion: wf3.Version}); err != nil {
		t.Fatal(err)
	}
	if listed(wf3.ID) {
		t.Errorf("an unfenced ending commit left the running-set entry")
	}
}
