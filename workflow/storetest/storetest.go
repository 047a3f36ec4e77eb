// Package storetest is the conformance suite every workflow.Store
// implementation runs in its tests: the in-memory store, the Redis store on
// miniredis, on a real Redis node and on a Redis Cluster.
//
// The suite checks the guarantees documented on workflow.Store: atomic,
// version-guarded commits; gap-free, unique message seqs under concurrent
// committers; scoping of documents, messages and traces to their workflow
// and of listings to their user; the administrators' listing of every
// user's workflows; ids unique across users; deletion that leaves nothing
// behind; the trace cap, and traces stored with the commit that carries
// them; the running set, each user's share of it, round leases and the
// claim that also reads what a run starts from (workflow.ClaimRoundLoad);
// the index of pending approvals by expiry (workflow.ApprovalIndex);
// standing approvals under their user, uses counted atomically
// (workflow.StandingStore); the Idempotency-Key answers of
// workflow.IdempotencyStore; the webhook outbox (workflow.WebhookOutbox);
// the budgets' usage counters (workflow.UsageStore).
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Fixture is one fresh store under test and the hooks the suite uses to look
// past its interface.
type Fixture struct {
	// Store is empty when the fixture is made.
	Store workflow.Store
	// TraceCap is the number of traces per workflow Store keeps; 0 means
	// the stores' default of 500.
	TraceCap int
	// KeysLeft, when set, counts what the backend still holds for a
	// workflow (keys with its hash tag, index entries naming it). The suite
	// expects 0 after DeleteWorkflow.
	KeysLeft func(t *testing.T, workflowID string) int
	// Advance moves the store's clock forward by d so that leases expire.
	// nil means the suite sleeps for d.
	Advance func(d time.Duration)
	// RunningFor returns the ids of userID's workflows in the store's
	// per-user running index, the set Commit.RunningLimit counts, in any
	// order; an empty userID is KindInvalid. workflow.Store does not
	// export that index, so each store's tests read it through a test-only
	// accessor. It is required: the suite checks the index against Running
	// through every commit and delete.
	RunningFor func(ctx context.Context, userID string) ([]string, error)
}

// RunFixture runs the suite with a fresh fixture for every test.
func RunFixture(t *testing.T, newFixture func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		run  func(t *testing.T, f Fixture)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"CreateTwiceConflicts", testCreateTwice},
		{"StaleVersionConflicts", testStaleVersion},
		{"CheckpointRoundTrip", testCheckpointRoundTrip},
		{"ReturnsCopies", testReturnsCopies},
		{"UserCannotChange", testUserCannotChange},
		{"InvalidInput", testInvalidInput},
		{"UnknownIDs", testUnknownIDs},
		{"Messages", testMessages},
		{"ConcurrentSameVersion", testConcurrentSameVersion},
		{"ConcurrentSeqs", testConcurrentSeqs},
		{"ListingScopedAndPaged", testListing},
		{"ListingCursorAndLimit", testListingCursor},
		{"ListAllUsersPaged", testListAll},
		{"ListAllEmpty", testListAllEmpty},
		{"CrossWorkflowScoping", testCrossWorkflow},
		{"LargeDocument", testLargeDocument},
		{"EmptyDocuments", testEmptyDocuments},
		{"DropDocuments", testDropDocuments},
		{"Traces", testTraces},
		{"TraceCap", testTraceCap},
		{"CommitTraces", testCommitTraces},
		{"CommitTraceCap", testCommitTraceCap},
		{"Delete", testDelete},
		{"Running", testRunning},
		{"RunningFor", testRunningFor},
		{"Leases", testLeases},
		{"LeaseExpiry", testLeaseExpiry},
		{"ClaimRoundLoad", testClaimRoundLoad},
		{"FencedCommit", testFencedCommit},
		{"RunningLimit", testRunningLimit},
		{"RunningLimitConcurrent", testRunningLimitConcurrent},
		{"ApprovalIndex", testApprovalIndex},
		{"StandingApprovals", testStandingApprovals},
		{"StandingApprovalUsesConcurrent", testStandingUsesConcurrent},
		{"WebhookOutbox", testWebhookOutbox},
		{"WebhookClaimsConcurrent", testWebhookClaimsConcurrent},
		{"WebhookKeep", testWebhookKeep},
		{"WebhookDeletedWorkflow", testWebhookDeletedWorkflow},
		{"WebhookClaimsShareUsers", testWebhookClaimsShareUsers},
		{"Usage", testUsage},
		{"UsageConcurrent", testUsageConcurrent},
		{"UsageBurstSettlesSmall", testUsageBurstSettlesSmall},
		{"UsageHoldExpires", testUsageHoldExpires},
		{"Ping", testPing},
		{"Idempotency", testIdempotency},
		{"IdempotencyRelease", testIdempotencyRelease},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"IdempotencyUserBound", testIdempotencyUserBound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if f.RunningFor == nil {
				t.Fatal("storetest: the fixture has no RunningFor")
			}
			if f.TraceCap == 0 {
				f.TraceCap = 500
			}
			tc.run(t, f)
		})
	}
}

// wantKind fails t unless err is of kind want.
func wantKind(t *testing.T, what string, err error, want workflow.Kind) {
	t.Helper()
	if got := workflow.KindOf(err); got != want {
		t.Errorf("%s: error kind = %q (%v), want %q", what, got, err, want)
	}
}

// must fails t at once on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testPing(t *testing.T, f Fixture) {
	ctx := context.Background()
	must(t, "Ping", f.Store.Ping(ctx))
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Store.Ping(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping(cancelled ctx) = %v, want context.Canceled", err)
	}
}
