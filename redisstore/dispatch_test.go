package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/dispatchtest"
)

// The conformance suite on miniredis and, with REDIS_URL, on a real Redis
// (short Block, so an empty Receive returns quickly).
func TestDispatcher(t *testing.T) {
	t.Parallel()
	opts := redisstore.DispatchOptions{Partitions: 3, Block: 100 * time.Millisecond}
	t.Run("miniredis", func(t *testing.T) {
		dispatchtest.Run(t, func(t *testing.T) workflow.Dispatcher {
			mr := miniredis.RunT(t)
			client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			d, err := redisstore.NewDispatcher(client, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
	})
	t.Run("redis", func(t *testing.T) {
		client := realClient(t, redisURL(t))
		dispatchtest.Run(t, func(t *testing.T) workflow.Dispatcher {
			d, err := redisstore.NewDispatcher(client, uniquePrefix(t, client), opts)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
	})
	// On a cluster each partition's stream is its own hash tag, so every
	// command (XADD, XREADGROUP, XAUTOCLAIM, the ack MULTI) stays in one
	// slot while the partitions spread over the shards.
	t.Run("cluster", func(t *testing.T) {
		client := clusterClient(t, clusterURL(t))
		dispatchtest.Run(t, func(t *testing.T) workflow.Dispatcher {
			d, err := redisstore.NewDispatcher(client, uniquePrefix(t, client), opts)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
	})
}

func TestNewDispatcherValidates(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = client.Close() })
	for _, tc := range []struct {
		name   string
		prefix string
		n      int
	}{
		{"braces in the prefix", "a{b}", 1},
		{"negative partitions", "", -1},
		{"too many partitions", "", redisstore.MaxDispatchPartitions + 1},
	} {
		if _, err := redisstore.NewDispatcher(client, tc.prefix, redisstore.DispatchOptions{Partitions: tc.n}); workflow.KindOf(err) != workflow.KindInvalid {
			t.Errorf("%s: %v, want KindInvalid", tc.name, err)
		}
	}
}

// Entries spread over the partitions by workflow id, each stream with the
// one consumer group; an acked entry is deleted, so a stream's length is
// what is still queued or pending.
func TestDispatchLayout(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	d, err := redisstore.NewDispatcher(client, "pfx", redisstore.DispatchOptions{Partitions: 4, Block: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 40 {
		if err := d.Enqueue(ctx, workflow.NewID(workflow.PrefixWorkflow)); err != nil {
			t.Fatal(err)
		}
	}
	total := int64(0)
	for p := range 4 {
		key := redisstore.DispatchKey("pfx", p)
		if key != "pfx:dispatch:{p"+string(rune('0'+p))+"}" {
			t.Fatalf("partition %d's key is %q", p, key)
		}
		n, err := client.XLen(ctx, key).Result()
		if err != nil || n == 0 {
			t.Errorf("partition %d holds %d entries (%v); 40 ids should reach every one of 4", p, n, err)
		}
		total += n
	}
	if total != 40 {
		t.Fatalf("%d entries in all, want 40", total)
	}
	dl, ok, err := d.Receive(ctx, "c1", 0)
	if !ok || err != nil {
		t.Fatalf("Receive: %v %v", ok, err)
	}
	groups, err := client.XInfoGroups(ctx, redisstore.DispatchKey("pfx", 0)).Result()
	if err != nil || len(groups) != 1 || groups[0].Name != redisstore.DispatchGroup || groups[0].Pending != 1 {
		t.Fatalf("XINFO GROUPS: %+v, %v; want one group %q with one pending entry", groups, err, redisstore.DispatchGroup)
	}
	before, _ := client.XLen(ctx, redisstore.DispatchKey("pfx", 0)).Result()
	if err := d.Ack(ctx, dl); err != nil {
		t.Fatal(err)
	}
	after, _ := client.XLen(ctx, redisstore.DispatchKey("pfx", 0)).Result()
	if after != before-1 {
		t.Errorf("ack left the stream at %d entries (was %d); want the entry deleted", after, before)
	}
}

// BenchmarkDispatchCycle is one round's dispatch on real Redis: Enqueue,
// Receive, one Touch (a lease renewal) and Ack, with their round trips.
func BenchmarkDispatchCycle(b *testing.B) {
	o, err := redis.ParseURL(redisURL(b))
	if err != nil {
		b.Fatal(err)
	}
	client := redis.NewClient(o)
	b.Cleanup(func() { _ = client.Close() })
	counter := &roundTrips{}
	client.AddHook(counter)
	d, err := redisstore.NewDispatcher(client, uniquePrefix(b, client), redisstore.DispatchOptions{Partitions: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	id := workflow.NewID(workflow.PrefixWorkflow)
	if err := d.Enqueue(ctx, id); err != nil { // creates the group on the first Receive
		b.Fatal(err)
	}
	if dl, ok, err := d.Receive(ctx, "bench", 0); !ok || err != nil {
		b.Fatal(ok, err)
	} else if err := d.Ack(ctx, dl); err != nil {
		b.Fatal(err)
	}
	counter.n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := d.Enqueue(ctx, id); err != nil {
			b.Fatal(err)
		}
		dl, ok, err := d.Receive(ctx, "bench", 0)
		if !ok || err != nil {
			b.Fatal(ok, err)
		}
		if err := d.Touch(ctx, "bench", dl); err != nil {
			b.Fatal(err)
		}
		if err := d.Ack(ctx, dl); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.n.Load())/float64(b.N), "roundtrips/op")
}

// Leave removes a consumer from the partitions where it holds nothing and
// keeps it (with its pending entry) where it still holds one.
func TestDispatcherLeave(t *testing.T) {
	t.Parallel()
	client := realClient(t, redisURL(t))
	prefix := uniquePrefix(t, client)
	d, err := redisstore.NewDispatcher(client, prefix, redisstore.DispatchOptions{Partitions: 1, Block: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := redisstore.DispatchKey(prefix, 0)
	consumers := func() map[string]int64 {
		list, err := client.XInfoConsumers(ctx, key, redisstore.DispatchGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, c := range list {
			out[c.Name] = c.Pending
		}
		return out
	}
	for _, c := range []string{"holds", "idle"} {
		if err := d.Enqueue(ctx, workflow.NewID(workflow.PrefixWorkflow)); err != nil {
			t.Fatal(err)
		}
		dl, ok, err := d.Receive(ctx, c, 0)
		if !ok || err != nil {
			t.Fatal(ok, err)
		}
		if c == "idle" {
			if err := d.Ack(ctx, dl); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []string{"holds", "idle", "never-seen"} {
		if err := d.Leave(ctx, c); err != nil {
			t.Fatalf("Leave(%s): %v", c, err)
		}
	}
	if got := consumers(); len(got) != 1 || got["holds"] != 1 {
		t.Fatalf("consumers after Leave: %v; want only holds, with its pending entry", got)
	}
}
