package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// usageT0 is the suite's clock for holds: far from any real time, so a
// hold's deadline is the test's alone.
var usageT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// testUsage follows a budget counter (workflow.UsageStore): a hold is
// granted while the settled usage and the live holds leave room under the
// limit (the hold itself may cross it, so a hold larger than the whole
// budget gets through when nothing is used); one refused only because of
// others' holds leaves the period unspent, and the period is spent only
// once the settled usage alone reaches the limit; settling drops the hold
// and counts what was used; counters are per user and period.
func testUsage(t *testing.T, f Fixture) {
	ctx := context.Background()
	u, ok := f.Store.(workflow.UsageStore)
	if !ok {
		t.Fatalf("%T is not a workflow.UsageStore", f.Store)
	}
	limit := workflow.Usage{Tokens: 100}
	reserve := func(user, period, id string, tokens int64, wantOK bool, want workflow.Usage) {
		t.Helper()
		hold := workflow.UsageHold{ID: id, Tokens: tokens, Now: usageT0, Expires: usageT0.Add(time.Hour)}
		got, ok, err := u.ReserveUsage(ctx, user, period, hold, limit, time.Hour)
		must(t, "ReserveUsage", err)
		if ok != wantOK || got != want {
			t.Errorf("ReserveUsage(%s, %s, %s %d) = %+v, %v; want %+v, %v", user, period, id, tokens, got, ok, want, wantOK)
		}
	}
	settle := func(user, period, id string, used workflow.Usage, want workflow.Usage) {
		t.Helper()
		got, err := u.AddUsage(ctx, user, period, id, used, usageT0, time.Hour)
		must(t, "AddUsage", err)
		if got != want {
			t.Errorf("AddUsage(%s, %s, %s, %+v) = %+v, want %+v", user, period, id, used, got, want)
		}
	}
	// Nothing used: a hold beyond the whole budget is granted.
	reserve("ann {x}", "d0", "big", 4196, true, workflow.Usage{Reserved: 4196})
	reserve("ann {x}", "d1", "h1", 60, true, workflow.Usage{Reserved: 60})
	// 40 left beside h1's hold: h2 may cross the limit.
	reserve("ann {x}", "d1", "h2", 50, true, workflow.Usage{Reserved: 110})
	// No room beside the holds: refused, not spent.
	reserve("ann {x}", "d1", "h3", 1, false, workflow.Usage{Reserved: 110})
	settle("ann {x}", "d1", "", workflow.Usage{}, workflow.Usage{Reserved: 110})
	settle("ann {x}", "d1", "h1", workflow.Usage{Tokens: 30, Micros: 7}, workflow.Usage{Tokens: 30, Micros: 7, Reserved: 50})
	settle("ann {x}", "d1", "h1", workflow.Usage{}, workflow.Usage{Tokens: 30, Micros: 7, Reserved: 50}) // settled once
	reserve("ann {x}", "d1", "h3", 10, true, workflow.Usage{Tokens: 30, Micros: 7, Reserved: 60})
	settle("ann {x}", "d1", "h2", workflow.Usage{Tokens: 75}, workflow.Usage{Tokens: 105, Micros: 7, Reserved: 10})
	// The settled usage reached the limit: spent.
	reserve("ann {x}", "d1", "h4", 1, false, workflow.Usage{Tokens: 105, Micros: 7, Reserved: 10, Spent: true})
	reserve("ann {x}", "d2", "h1", 41, true, workflow.Usage{Reserved: 41})
	reserve("bob", "d1", "h1", 100, true, workflow.Usage{Reserved: 100})
	settle("ann {x}", "d1", "h3", workflow.Usage{Tokens: -1000}, workflow.Usage{Micros: 7, Spent: true})
	// Dollars: checked against the settled micro-dollars.
	hold := workflow.UsageHold{ID: "c1", Tokens: 1, Now: usageT0, Expires: usageT0.Add(time.Hour)}
	if _, err := u.AddUsage(ctx, "cy", "d1", "", workflow.Usage{Micros: 50}, usageT0, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := u.ReserveUsage(ctx, "cy", "d1", hold, workflow.Usage{Micros: 49}, time.Hour); err != nil || ok || !got.Spent {
		t.Errorf("ReserveUsage past the dollars = %+v, %v, %v; want refused, spent", got, ok, err)
	}
}

// testUsageConcurrent has 50 holds of 10 tokens race for a limit of 200:
// exactly 20 are granted, and the others' refusal (for holds, not for
// settled usage) leaves the period unspent.
func testUsageConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	u := f.Store.(workflow.UsageStore)
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			hold := workflow.UsageHold{ID: fmt.Sprint(i), Tokens: 10, Now: usageT0, Expires: usageT0.Add(time.Hour)}
			_, ok, err := u.ReserveUsage(ctx, "racer", "m1", hold, workflow.Usage{Tokens: 200}, time.Hour)
			if err != nil {
				t.Errorf("ReserveUsage: %v", err)
			}
			if ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 20 {
		t.Errorf("%d reservations granted, want 20", granted)
	}
	got, err := u.AddUsage(ctx, "racer", "m1", "", workflow.Usage{}, usageT0, time.Hour)
	must(t, "AddUsage", err)
	if got != (workflow.Usage{Reserved: 200}) {
		t.Errorf("after the race: %+v, want 200 reserved, not spent", got)
	}
}

// testUsageBurstSettlesSmall has 100 calls each reserving 100 tokens of a
// 1000-token budget and settling 1 token, each trying again (bounded) when
// refused: every call gets through, 100 tokens are used, and the period is
// never marked spent, though the burst kept the holds at the limit.
func testUsageBurstSettlesSmall(t *testing.T, f Fixture) {
	ctx := context.Background()
	u := f.Store.(workflow.UsageStore)
	limit := workflow.Usage{Tokens: 1000}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			hold := workflow.UsageHold{ID: fmt.Sprint("b", i), Tokens: 100, Now: usageT0, Expires: usageT0.Add(time.Hour)}
			for try := 0; ; try++ {
				got, ok, err := u.ReserveUsage(ctx, "burst", "m1", hold, limit, time.Hour)
				if err != nil || got.Spent {
					t.Errorf("ReserveUsage: %+v, %v", got, err)
					return
				}
				if ok {
					break
				}
				if try == 10000 {
					t.Errorf("call %d never got through", i)
					return
				}
				time.Sleep(time.Millisecond)
			}
			if _, err := u.AddUsage(ctx, "burst", "m1", hold.ID, workflow.Usage{Tokens: 1}, usageT0, time.Hour); err != nil {
				t.Errorf("AddUsage: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := u.AddUsage(ctx, "burst", "m1", "", workflow.Usage{}, usageT0, time.Hour)
	must(t, "AddUsage", err)
	if got != (workflow.Usage{Tokens: 100}) {
		t.Errorf("after the burst: %+v, want 100 tokens used, nothing reserved, not spent", got)
	}
}

// testUsageHoldExpires: a hold never settled (its instance died) stops
// counting at its deadline; settling it late counts what was used once.
func testUsageHoldExpires(t *testing.T, f Fixture) {
	ctx := context.Background()
	u := f.Store.(workflow.UsageStore)
	limit := workflow.Usage{Tokens: 100}
	at := func(id string, tokens int64, now time.Time) workflow.UsageHold {
		return workflow.UsageHold{ID: id, Tokens: tokens, Now: now, Expires: now.Add(time.Minute)}
	}
	if _, ok, err := u.ReserveUsage(ctx, "lost", "d1", at("dead", 100, usageT0), limit, time.Hour); err != nil || !ok {
		t.Fatalf("first hold: %v, %v", ok, err)
	}
	soon := usageT0.Add(59 * time.Second)
	if got, ok, err := u.ReserveUsage(ctx, "lost", "d1", at("next", 60, soon), limit, time.Hour); err != nil || ok || got.Spent {
		t.Errorf("before the deadline: %+v, %v, %v; want refused, not spent", got, ok, err)
	}
	later := usageT0.Add(time.Minute)
	got, ok, err := u.ReserveUsage(ctx, "lost", "d1", at("next", 60, later), limit, time.Hour)
	if err != nil || !ok || got != (workflow.Usage{Reserved: 60}) {
		t.Errorf("at the deadline: %+v, %v, %v; want granted, 60 reserved", got, ok, err)
	}
	got, err = u.AddUsage(ctx, "lost", "d1", "dead", workflow.Usage{Tokens: 5}, later, time.Hour)
	must(t, "AddUsage", err)
	if got != (workflow.Usage{Tokens: 5, Reserved: 60}) {
		t.Errorf("settling the expired hold: %+v, want 5 tokens, 60 reserved", got)
	}
}
