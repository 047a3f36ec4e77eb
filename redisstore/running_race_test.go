package redisstore_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// TestLateUnlistKeepsARunningWorkflowFound (issue 45 item 3): a commit
// that pauses a round removes the workflow's running-set entry after its
// script, as a command of its own. When an approval is decided or expires
// on another instance at that moment, the commit that makes the workflow
// run again can come in between, and the late removal took its entry
// away: a running workflow the recovery scan (Running) never found, so a
// round whose dispatch was lost had no runner. The removal now leaves the
// entry of a workflow that runs.
func TestLateUnlistKeepsARunningWorkflowFound(t *testing.T) {
	t.Parallel()
	stores := map[string]*redisstore.Store{}
	_, stores["miniredis"] = newMini(t, redisstore.Options{KeyPrefix: "late"})
	if url := os.Getenv("REDIS_URL"); url != "" {
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		client := redis.NewClient(o)
		t.Cleanup(func() { _ = client.Close() })
		prefix := "twostep-latetest:" + workflow.NewID("")
		t.Cleanup(func() {
			iter := client.Scan(context.Background(), 0, prefix+":*", 500).Iterator()
			for iter.Next(context.Background()) {
				client.Del(context.Background(), iter.Val())
			}
		})
		stores["redis"] = redisstore.New(client, redisstore.Options{KeyPrefix: prefix})
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now().UTC()
			wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
				Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: now, UpdatedAt: now}
			commit := func(status workflow.Status) {
				t.Helper()
				next := wf.Clone()
				next.Status = status
				stored, _, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version})
				if err != nil {
					t.Fatalf("commit %s: %v", status, err)
				}
				wf = stored
			}
			commit(workflow.StatusRunning)
			commit(workflow.StatusAwaitingApproval) // the pause...
			commit(workflow.StatusRunning)          // ...and the expiry that wins right after it
			// The pause's removal arriving late, after the expiry's commit.
			if err := redisstore.UnlistRunning(s, ctx, wf.ID, wf.UserID); err != nil {
				t.Fatal(err)
			}
			ids, err := s.Running(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(ids, wf.ID) {
				t.Errorf("Running() = %v: the running workflow %s is not found", ids, wf.ID)
			}
			commit(workflow.StatusCompleted)
			if ids, err := s.Running(ctx); err != nil || slices.Contains(ids, wf.ID) {
				t.Errorf("Running() after the round ended = %v, %v; want it gone", ids, err)
			}
		})
	}
}
