package react_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// The multi-instance behaviour on a real Redis (leases expire on Redis's
// clock, which miniredis does not advance by itself): crash takeover and
// Stop from another instance. Skipped without REDIS_URL, failed in CI.
func TestMultiInstanceOnRedis(t *testing.T) {
	t.Parallel()
	newShared := redisStores(t)
	t.Run("crash takeover", func(t *testing.T) { crashTakeover(t, newShared, happyPath(), afterCommits(1, 3, 5)...) })
	t.Run("crash after a rejected attempt", func(t *testing.T) {
		crashTakeover(t, newShared, withRejections(), slices.Concat(afterCommits(1, 3), duringCalls(1, 3))...)
	})
	t.Run("stop and resume", func(t *testing.T) { stopThenResume(t, newShared) })
}

// redisStores returns a constructor of stores on REDIS_URL, each under its
// own key prefix deleted when its test ends.
func redisStores(t testing.TB) func(testing.TB) workflow.Store {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDIS_URL is not set; CI must test against a real Redis")
		}
		t.Skip("REDIS_URL is not set")
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client := redis.NewClient(o)
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at REDIS_URL does not answer: %v", err)
	}
	return func(tb testing.TB) workflow.Store {
		prefix := "twostep-enginetest:" + workflow.NewID("")
		tb.Cleanup(func() {
			ctx := context.Background()
			iter := client.Scan(ctx, 0, prefix+":*", 500).Iterator()
			for iter.Next(ctx) {
				client.Del(ctx, iter.Val())
			}
			if err := iter.Err(); err != nil {
				tb.Errorf("cleaning up %s: %v", prefix, err)
			}
		})
		return redisstore.New(client, redisstore.Options{KeyPrefix: prefix})
	}
}
