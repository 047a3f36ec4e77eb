package workflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// failingMessages is a store without RoundLoader whose Messages fails as
// an unreachable store does.
type failingMessages struct{ workflow.Store }

func (failingMessages) Messages(context.Context, string, int64, int) ([]workflow.Message, error) {
	return nil, workflow.Errorf(workflow.KindUnavailable, "store down")
}

// ClaimRoundLoad on a store without RoundLoader claims and then reads; a
// read that fails returns its error and releases the lease just taken,
// so another instance need not wait for it to expire.
func TestClaimRoundLoadReleasesTheLeaseWhenAReadFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memstore.New()
	wf, _, err := store.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow),
		UserID: "alice", Mode: workflow.ModeReact, Status: workflow.StatusRunning}})
	if err != nil {
		t.Fatal(err)
	}
	fence, got, msgs, err := workflow.ClaimRoundLoad(ctx, failingMessages{store}, wf.ID, "a", time.Hour)
	if workflow.KindOf(err) != workflow.KindUnavailable || fence != 0 || got != nil || msgs != nil {
		t.Fatalf("ClaimRoundLoad with a failing read = %d, %v, %d messages, %v; want 0, nil, none, unavailable", fence, got, len(msgs), err)
	}
	if fence, err := store.ClaimRound(ctx, wf.ID, "b", time.Hour); err != nil || fence != 2 {
		t.Fatalf("ClaimRound(b) after the failed load = %d, %v; want fence 2 (a's lease released)", fence, err)
	}
}
