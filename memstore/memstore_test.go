package memstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow/storetest"
)

// fakeClock is a clock the suite moves forward to expire leases.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		s := memstore.New(memstore.WithTraceCap(5), memstore.WithClock(clock.Now))
		return storetest.Fixture{
			Store:    s,
			TraceCap: 5,
			KeysLeft: func(t *testing.T, id string) int { return memstore.EntriesOf(s, id) },
			Advance:  clock.Advance,
			RunningFor: func(ctx context.Context, user string) ([]string, error) {
				return memstore.RunningFor(s, ctx, user)
			},
		}
	})
}

// TestConformanceDefaults runs the suite on a store built with no options,
// as the gateway builds it (default trace cap, wall clock).
func TestConformanceDefaults(t *testing.T) {
	t.Parallel()
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		s := memstore.New()
		return storetest.Fixture{
			Store: s,
			RunningFor: func(ctx context.Context, user string) ([]string, error) {
				return memstore.RunningFor(s, ctx, user)
			},
		}
	})
}
