package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
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

// A commit that ends a round is applied by its script; failing to take the
// id out of the running sets afterwards (readers skip such stale entries)
// must not report the applied commit as failed, or callers act as if
// nothing was written: Stop answers an error for a stop that took effect,
// and the engine treats a committed step as lost.
func TestCommitEndingARoundSucceedsWhenTheRunningSetsLag(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	hook := &failSRem{}
	client.AddHook(hook)
	s := redisstore.New(client, redisstore.Options{KeyPrefix: "ts"})
	ctx := context.Background()
	now := time.Now().UTC()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, CreatedAt: now, UpdatedAt: now}
	stored, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
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
	if ids, err := redisstore.RunningFor(s, ctx, "alice"); err != nil || len(ids) != 0 {
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
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	hook := &failSRem{}
	client.AddHook(hook)
	s := redisstore.New(client, redisstore.Options{KeyPrefix: "ts"})
	ctx := context.Background()
	now := time.Now().UTC()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, CreatedAt: now, UpdatedAt: now}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
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
	if ids, err := redisstore.RunningFor(s, ctx, "alice"); err != nil || len(ids) != 0 {
		t.Errorf("RunningFor = %v, %v; want none", ids, err)
	}
}
