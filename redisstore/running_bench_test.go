package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// Shape of the running-limit benchmark: one user with a few running rounds
// among many other users' running rounds, as on a shared Redis.
const (
	benchOtherUsers = 1000
	benchOwnRunning = 3
)

// BenchmarkRunningLimit measures reading one user's running rounds with
// 1,000 other users' rounds running: through the user's running set (the
// set Commit.RunningLimit counts, read by the test accessor RunningFor)
// against the path it replaced (Running, then GetWorkflow of every id to
// find its owner).
// Both report the count they found and their round trips per check.
func BenchmarkRunningLimit(b *testing.B) {
	paths := []struct {
		name  string
		count func(context.Context, *redisstore.Store) (int, error)
	}{
		{"RunningFor", func(ctx context.Context, s *redisstore.Store) (int, error) {
			ids, err := redisstore.RunningFor(s, ctx, "me")
			return len(ids), err
		}},
		{"Running+GetWorkflow", countByReadingAll},
	}
	backends := []struct {
		name   string
		client func(b *testing.B) *redis.Client
	}{
		{"miniredis", func(b *testing.B) *redis.Client {
			return redis.NewClient(&redis.Options{Addr: miniredis.RunT(b).Addr()})
		}},
		{"redis", func(b *testing.B) *redis.Client {
			o, err := redis.ParseURL(redisURL(b))
			if err != nil {
				b.Fatal(err)
			}
			return redis.NewClient(o)
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			client := be.client(b)
			b.Cleanup(func() { _ = client.Close() })
			counter := &roundTrips{}
			client.AddHook(counter)
			s := redisstore.New(client, redisstore.Options{KeyPrefix: uniquePrefix(b, client)})
			fillRunning(b, s)
			for _, p := range paths {
				b.Run(p.name, func(b *testing.B) {
					ctx := context.Background()
					counter.n.Store(0)
					b.ReportAllocs()
					for b.Loop() {
						n, err := p.count(ctx, s)
						if err != nil {
							b.Fatal(err)
						}
						if n != benchOwnRunning {
							b.Fatalf("counted %d running rounds, want %d", n, benchOwnRunning)
						}
					}
					b.ReportMetric(float64(counter.n.Load())/float64(b.N), "roundtrips/op")
				})
			}
		})
	}
}

// countByReadingAll is the engine's former check: every running id of the
// store, each workflow read to learn whose it is.
func countByReadingAll(ctx context.Context, s *redisstore.Store) (int, error) {
	ids, err := s.Running(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		wf, err := s.GetWorkflow(ctx, id)
		if err == nil && wf.UserID == "me" && wf.Status == workflow.StatusRunning {
			n++
		}
	}
	return n, nil
}

// fillRunning commits benchOwnRunning running workflows of user "me", one of
// each of benchOtherUsers other users, and a completed one of "me".
func fillRunning(b *testing.B, s *redisstore.Store) {
	b.Helper()
	ctx := context.Background()
	commit := func(user string, status workflow.Status) {
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact, Status: status, Round: 1, MaxSteps: 10}
		if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchOtherUsers {
		commit(fmt.Sprintf("user-%04d", i), workflow.StatusRunning)
	}
	for range benchOwnRunning {
		commit("me", workflow.StatusRunning)
	}
	commit("me", workflow.StatusCompleted)
}
