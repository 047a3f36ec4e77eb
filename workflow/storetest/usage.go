package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// testUsage follows a budget counter (workflow.UsageStore): reservations
// within the limit are added, the one that would pass it is refused and
// adds nothing, a settlement gives tokens back (never below zero), and
// counters are per user and period.
func testUsage(t *testing.T, f Fixture) {
	ctx := context.Background()
	u, ok := f.Store.(workflow.UsageStore)
	if !ok {
		t.Fatalf("%T is not a workflow.UsageStore", f.Store)
	}
	limit := workflow.Usage{Tokens: 100}
	reserve := func(user, period string, tokens int64, wantOK bool, want int64) {
		t.Helper()
		got, ok, err := u.ReserveUsage(ctx, user, period, workflow.Usage{Tokens: tokens, Micros: 7}, limit, time.Hour)
		must(t, "ReserveUsage", err)
		if ok != wantOK || got.Tokens != want {
			t.Errorf("ReserveUsage(%s, %s, %d) = %d, %v; want %d, %v", user, period, tokens, got.Tokens, ok, want, wantOK)
		}
	}
	reserve("ann {x}", "d1", 60, true, 60)
	if got, _ := u.AddUsage(ctx, "ann {x}", "d1", workflow.Usage{}, time.Hour); got.Spent {
		t.Errorf("spent before any refusal: %+v", got)
	}
	reserve("ann {x}", "d1", 41, false, 60)
	if got, _ := u.AddUsage(ctx, "ann {x}", "d1", workflow.Usage{}, time.Hour); !got.Spent || got.Tokens != 60 {
		t.Errorf("after a refusal: %+v, want 60 tokens, spent", got)
	}
	reserve("ann {x}", "d1", 40, true, 100)
	reserve("ann {x}", "d2", 41, true, 41)
	reserve("bob", "d1", 100, true, 100)
	got, err := u.AddUsage(ctx, "ann {x}", "d1", workflow.Usage{Tokens: -30}, time.Hour)
	must(t, "AddUsage", err)
	if got.Tokens != 70 || got.Micros != 14 {
		t.Errorf("AddUsage(-30) = %+v, want 70 tokens and 14 micros", got)
	}
	got, err = u.AddUsage(ctx, "ann {x}", "d1", workflow.Usage{Tokens: -1000}, time.Hour)
	must(t, "AddUsage", err)
	if got.Tokens != 0 {
		t.Errorf("AddUsage(-1000) = %+v, want 0 tokens", got)
	}
}

// testUsageConcurrent has 50 reservations of 10 tokens race for a limit
// of 200: exactly 20 are granted.
func testUsageConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	u := f.Store.(workflow.UsageStore)
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, ok, err := u.ReserveUsage(ctx, "racer", "m1", workflow.Usage{Tokens: 10}, workflow.Usage{Tokens: 200}, time.Hour)
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
}
