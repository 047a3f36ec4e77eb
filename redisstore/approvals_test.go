package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// Approvals paused before the store kept the approval index (simulated by
// taking their entries out) are indexed by the first BackfillApprovals,
// and expire like the others; later calls, from any instance, find the
// index backfilled and add nothing.
func TestBackfillIndexesApprovalsStoredBeforeTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	s := redisstore.New(client, redisstore.Options{KeyPrefix: "ts"})
	expires := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	var ids []string
	for _, user := range []string{"alice", "bob", "alice"} {
		now := time.Now().UTC().Truncate(time.Millisecond)
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact,
			Status: workflow.StatusAwaitingApproval, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: now, UpdatedAt: now,
			PendingApproval: &workflow.PendingApproval{ID: workflow.NewID(workflow.PrefixApproval), Action: "a.b", Round: 1, Step: 1,
				Parameters: map[string]any{}, Effect: workflow.EffectWrite, RequestedAt: now, ExpiresAt: expires}}
		if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wf.ID)
	}
	for i := range 16 {
		client.Del(ctx, "ts:{i"+strconv.Itoa(i)+"}:approvals")
	}
	if got, _, err := s.DueApprovals(ctx, expires, workflow.DueCursor{}, 10); err != nil || len(got) != 0 {
		t.Fatalf("DueApprovals without the index = %v, %v; want none (the data predates the index)", got, err)
	}

	if n, err := s.BackfillApprovals(ctx); err != nil || n != 3 {
		t.Fatalf("BackfillApprovals = %d, %v; want 3", n, err)
	}
	got, _, err := s.DueApprovals(ctx, expires, workflow.DueCursor{}, 10)
	slices.Sort(got)
	slices.Sort(ids)
	if err != nil || !slices.Equal(got, ids) {
		t.Errorf("DueApprovals after the backfill = %v, %v; want %v", got, err, ids)
	}
	other := redisstore.New(client, redisstore.Options{KeyPrefix: "ts"})
	for i := range 16 {
		client.Del(ctx, "ts:{i"+strconv.Itoa(i)+"}:approvals")
	}
	if n, err := other.BackfillApprovals(ctx); err != nil || n != 0 {
		t.Errorf("a second BackfillApprovals = %d, %v; want 0 (done once for the store)", n, err)
	}
}
