package react_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// TestApprovalExpiresSoonAfterItsDeadline: with a 2 s approval timeout and
// the real clock, an undecided approval is rejected as expired by the
// engine's own background expiry (no call to ExpireApprovals), and the
// round goes on. The once-a-minute listing scan this replaced would leave
// it pending far past the test's bounded wait.
func TestApprovalExpiresSoonAfterItsDeadline(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t), enginetest.NewRegistry()
			cfg := approvalConfig()
			cfg.ApprovalTimeout = 2 * time.Second
			e, wf, _ := pausedAt(t, store, reg, cfg, enginetest.Completes("gave up"))
			expires := wf.PendingApproval.ExpiresAt

			// Bounded: the expiry polls every second; 15 s leaves room for a
			// loaded machine without waiting for a minute-long scan.
			deadline := expires.Add(15 * time.Second)
			var got *workflow.Workflow
			for {
				var err error
				got, err = e.Get(context.Background(), "alice", wf.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != workflow.StatusAwaitingApproval || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got.Status == workflow.StatusAwaitingApproval {
				t.Fatalf("approval still pending %s after its expiresAt", time.Since(expires).Round(time.Second))
			}
			t.Logf("expired and moved on %s after expiresAt", time.Since(expires).Round(10*time.Millisecond))
			done := wait(t, e, wf.ID)
			msgs := messages(t, store, wf.ID)
			if done.Status != workflow.StatusCompleted || msgs[1].Status != workflow.MessageRejected || !strings.Contains(msgs[1].Summary, "expired") {
				t.Errorf("after expiry: %s, message %+v; want completed after a step rejected as expired", done.Status, msgs[1])
			}
			if n := len(reg.Calls()); n != 0 {
				t.Errorf("an expired approval ran the action %d times", n)
			}
		})
	}
}

// TestExpiryRacingADecisionAppliesOnce: one instance approves while
// another, whose clock is past the deadline, expires the same approval.
// Both commit under the version check, so exactly one applies: the step
// runs once and is never also recorded as expired, or it is rejected as
// expired and never runs.
func TestExpiryRacingADecisionAppliesOnce(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for i := range 10 {
				store, reg := newStore(t), enginetest.NewRegistry()
				cfg := approvalConfig()
				cfg.ApprovalTimeout = time.Hour
				e, wf, _ := pausedAt(t, store, reg, cfg, enginetest.Completes("done"))
				late := testConfig("b")
				late.Approvals = echoNeedsApproval{}
				late.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
				other, err := engine.New(late, store, scripted.New(), reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				var decideErr, expireErr error
				var expired int
				wg.Go(func() {
					_, decideErr = e.Decide(context.Background(), "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Approve: true})
				})
				wg.Go(func() { expired, expireErr = other.ExpireApprovals(context.Background()) })
				wg.Wait()
				if expireErr != nil {
					t.Fatalf("run %d: ExpireApprovals: %v", i, expireErr)
				}
				approved := decideErr == nil
				if !approved && workflow.KindOf(decideErr) != workflow.KindConflict {
					t.Fatalf("run %d: Decide: %v", i, decideErr)
				}
				wait(t, e, wf.ID)
				var rejected int
				for _, m := range messages(t, store, wf.ID) {
					if m.Status == workflow.MessageRejected {
						rejected++
					}
				}
				runs := len(reg.Calls())
				if approved == (expired == 1) || rejected != expired || runs+rejected != 1 {
					t.Errorf("run %d: approved %v, expired %d, rejected messages %d, executions %d; want exactly one outcome",
						i, approved, expired, rejected, runs)
				}
			}
		})
	}
}

// TestExpiryPagesPastUsersAtTheirLimit: an expiry moves the workflow back
// to running, which the user's running limit may refuse. More approvals
// due than one page of the index, all of a user at the limit, come before
// another user's approval: the poll pages past the refused ones and
// expires the other user's, where one page that expired nothing once
// stopped the poll, so that approval would never expire.
func TestExpiryPagesPastUsersAtTheirLimit(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := newStore(t)
			base := time.Now().UTC().Truncate(time.Second)
			put := func(user string, status workflow.Status, expires time.Time) *workflow.Workflow {
				t.Helper()
				wf := &workflow.Workflow{
					ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact,
					Status: status, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: base, UpdatedAt: base,
				}
				if status == workflow.StatusAwaitingApproval {
					wf.PendingApproval = &workflow.PendingApproval{
						ID: workflow.NewID(workflow.PrefixApproval), Action: "test.echo", Round: 1, Step: 1,
						Parameters: map[string]any{"text": "hi"}, Effect: workflow.EffectWrite,
						RequestedAt: expires.Add(-time.Minute), ExpiresAt: expires,
					}
				}
				got, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			put("bob", workflow.StatusRunning, time.Time{}) // bob is at his limit of one
			const held = 130                                // more than one page of the index
			for i := range held {
				put("bob", workflow.StatusAwaitingApproval, base.Add(time.Duration(i)*time.Millisecond))
			}
			alice := put("alice", workflow.StatusAwaitingApproval, base.Add(time.Minute))

			cfg := approvalConfig()
			cfg.MaxRunningPerUser = 1
			cfg.Now = func() time.Time { return base.Add(time.Hour) }
			e, err := engine.New(cfg, store, scripted.New(), enginetest.NewRegistry(), map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
			if err != nil {
				t.Fatal(err)
			}
			n, err := e.ExpireApprovals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := store.GetWorkflow(ctx, alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 || got.Status == workflow.StatusAwaitingApproval {
				t.Errorf("ExpireApprovals expired %d, alice's workflow %s; want 1 expired and alice's moved on (bob's %d held by his limit)",
					n, got.Status, held)
			}
		})
	}
}
