package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/storetest"
)

const testTraceCap = 5

func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		mr := miniredis.RunT(t)
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { _ = client.Close() })
		opts := redisstore.Options{KeyPrefix: "ts", TraceCap: testTraceCap}
		s := redisstore.New(client, opts)
		return storetest.Fixture{
			Store:      s,
			TraceCap:   testTraceCap,
			KeysLeft:   func(t *testing.T, id string) int { return keysLeft(t, client, opts.KeyPrefix, id) },
			RunningFor: runningFor(s),
			Advance:    mr.FastForward,
		}
	})
}

func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		client := realClient(t, url)
		opts := redisstore.Options{KeyPrefix: uniquePrefix(t, client), TraceCap: testTraceCap}
		s := redisstore.New(client, opts)
		return storetest.Fixture{
			Store:      s,
			TraceCap:   testTraceCap,
			KeysLeft:   func(t *testing.T, id string) int { return keysLeft(t, client, opts.KeyPrefix, id) },
			RunningFor: runningFor(s),
		}
	})
}

// TestConformanceCluster runs the suite on the Redis Cluster at
// REDIS_CLUSTER_URL (.ci/redis-cluster.sh starts one), through Open, so the
// store's cluster detection and cluster client are the ones under test.
func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	url := clusterURL(t)
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		ctx := context.Background()
		probe := clusterClient(t, url)
		prefix := uniquePrefix(t, probe)
		s, err := redisstore.Open(ctx, url, redisstore.Options{KeyPrefix: prefix, TraceCap: testTraceCap})
		if err != nil {
			t.Fatalf("Open(cluster): %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if !s.Cluster() {
			t.Fatal("Open did not detect the Redis Cluster")
		}
		return storetest.Fixture{
			Store:      s,
			TraceCap:   testTraceCap,
			KeysLeft:   func(t *testing.T, id string) int { return keysLeft(t, probe, prefix, id) },
			RunningFor: runningFor(s),
		}
	})
}

// TestConformanceWaitReplicas runs the suite with WaitReplicas on one node
// and on the cluster: every write the API acknowledges is then followed by
// WAIT on the same connection (on the cluster, after the index writes, on
// a connection to the slot's master). Neither has replicas here, so each
// WAIT ends at its 1 ms timeout; the failover test covers the replicas.
func TestConformanceWaitReplicas(t *testing.T) {
	t.Parallel()
	opts := redisstore.Options{TraceCap: testTraceCap, WaitReplicas: 1, WaitTimeout: time.Millisecond}
	t.Run("node", func(t *testing.T) {
		t.Parallel()
		url := redisURL(t)
		storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
			client := realClient(t, url)
			o := opts
			o.KeyPrefix = uniquePrefix(t, client)
			s := redisstore.New(client, o)
			return storetest.Fixture{
				Store:      s,
				TraceCap:   testTraceCap,
				KeysLeft:   func(t *testing.T, id string) int { return keysLeft(t, client, o.KeyPrefix, id) },
				RunningFor: runningFor(s),
			}
		})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		url := clusterURL(t)
		storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
			client := clusterClient(t, url)
			o := opts
			o.KeyPrefix = uniquePrefix(t, client)
			s := redisstore.New(client, o)
			return storetest.Fixture{
				Store:      s,
				TraceCap:   testTraceCap,
				KeysLeft:   func(t *testing.T, id string) int { return keysLeft(t, client, o.KeyPrefix, id) },
				RunningFor: runningFor(s),
			}
		})
	})
}

// redisURL returns REDIS_URL, skipping the test when it is unset — unless
// CI is set: there a missing Redis is a failure.
func redisURL(t testing.TB) string {
	t.Helper()
	return envURL(t, "REDIS_URL")
}

// clusterURL returns REDIS_CLUSTER_URL, the URL of a Redis Cluster (seeds
// as addr= parameters), skipping the test when it is unset — unless CI is
// set: there a missing cluster is a failure.
func clusterURL(t testing.TB) string {
	t.Helper()
	return envURL(t, "REDIS_CLUSTER_URL")
}

func envURL(t testing.TB, name string) string {
	t.Helper()
	url := os.Getenv(name)
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set; CI must test against a real Redis", name)
		}
		t.Skipf("%s is not set", name)
	}
	return url
}

// realClient connects to url or fails the test: REDIS_URL was set, so an
// unusable Redis is an error, not a reason to skip.
func realClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client := redis.NewClient(o)
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at REDIS_URL does not answer: %v", err)
	}
	return client
}

// clusterClient connects a cluster client to url or fails the test.
func clusterClient(t testing.TB, url string) *redis.ClusterClient {
	t.Helper()
	o, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatalf("REDIS_CLUSTER_URL: %v", err)
	}
	client := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis Cluster at REDIS_CLUSTER_URL does not answer: %v", err)
	}
	return client
}

// scanKeys calls each for every key matching pattern: SCAN on a single
// node, SCAN on every master of a cluster (each is called by one
// goroutine at a time).
func scanKeys(ctx context.Context, client redis.UniversalClient, pattern string, each func(key string)) error {
	var mu sync.Mutex
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			each(iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	switch c := client.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, scan)
	case *redis.Client:
		return scan(ctx, c)
	}
	return fmt.Errorf("scanKeys: unsupported client %T", client)
}

// uniquePrefix returns a key prefix no other test uses and deletes every
// key under it when the test ends.
func uniquePrefix(t testing.TB, client redis.UniversalClient) string {
	prefix := "twosteptest:" + strings.ToLower(workflow.NewID(""))
	t.Cleanup(func() {
		ctx := context.Background()
		var keys []string
		err := scanKeys(ctx, client, prefix+":*", func(k string) { keys = append(keys, k) })
		for _, k := range keys {
			client.Del(ctx, k)
		}
		if err != nil {
			t.Errorf("cleaning up %s: %v", prefix, err)
		}
	})
	return prefix
}

// keysLeft counts what Redis still holds for a workflow: keys of the
// workflow in any user's slot, its owner key, its entry in any user's
// running set or listing, in the partitions of the running set and of the
// admin listing, and in the trace index.
func keysLeft(t *testing.T, client redis.UniversalClient, prefix, id string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	count := func() { n++ }
	scan := func(pattern string, each func(key string)) {
		if err := scanKeys(ctx, client, pattern, each); err != nil {
			t.Fatalf("SCAN %s: %v", pattern, err)
		}
	}
	scan(prefix+":{u:*}:wf:"+id+":*", func(string) { count() })
	if client.Exists(ctx, prefix+":owner:{"+id+"}").Val() == 1 {
		count()
	}
	scan(prefix+":{u:*}:running", func(key string) {
		if client.SIsMember(ctx, key, id).Val() {
			count()
		}
	})
	scan(prefix+":{u:*}:workflows", func(key string) {
		if client.ZScore(ctx, key, id).Err() == nil {
			count()
		}
	})
	for i := range 16 {
		tag := prefix + ":{i" + strconv.Itoa(i) + "}:"
		if len(client.ZRangeByLex(ctx, tag+"workflows", &redis.ZRangeBy{Min: "[" + id + "\x00", Max: "(" + id + "\x01"}).Val()) > 0 {
			count()
		}
		for _, r := range client.SMembers(ctx, tag+"running").Val() {
			if strings.HasPrefix(r, id+"\x00") {
				count()
			}
		}
		for _, r := range client.ZRange(ctx, tag+"approvals", 0, -1).Val() {
			if strings.HasPrefix(r, id+"\x00") {
				count()
			}
		}
	}
	scan(prefix+":trace:*", func(key string) {
		if strings.HasPrefix(client.Get(ctx, key).Val(), id+"\x00") {
			count()
		}
	})
	return n
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mr := miniredis.RunT(t)
	s, err := redisstore.Open(ctx, "redis://"+mr.Addr()+"/0", redisstore.Options{})
	if err != nil {
		t.Fatalf("Open(miniredis): %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	closed := miniredis.RunT(t)
	addr := closed.Addr()
	closed.Close()
	tests := []struct {
		name string
		url  string
		opts redisstore.Options
		want workflow.Kind
	}{
		{"unreachable", "redis://" + addr, redisstore.Options{}, workflow.KindUnavailable},
		{"not a redis url", "http://example.invalid", redisstore.Options{}, workflow.KindInvalid},
		{"prefix with a brace", "redis://" + mr.Addr(), redisstore.Options{KeyPrefix: "a{b"}, workflow.KindInvalid},
		{"negative retention", "redis://" + mr.Addr(), redisstore.Options{Retention: -time.Second}, workflow.KindInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := redisstore.Open(ctx, tc.url, tc.opts)
			if got := workflow.KindOf(err); got != tc.want {
				t.Errorf("Open(%q) error kind = %q (%v), want %q", tc.url, got, err, tc.want)
			}
		})
	}
}

// TestOpenNeverEchoesThePassword: a malformed URL's error says what is
// wrong without quoting the URL, which may carry a password.
func TestOpenNeverEchoesThePassword(t *testing.T) {
	t.Parallel()
	const password = "pw-MARKER-5b7c"
	for _, raw := range []string{
		"redis://:" + password + "@[bad",
		"redis://user:" + password + "@host:notaport",
		"redis://:" + password + "@localhost:6379/notadb",
		"http://:" + password + "@localhost:6379",
	} {
		_, err := redisstore.Open(context.Background(), raw, redisstore.Options{})
		if err == nil {
			t.Errorf("Open(<url>) succeeded, want an error")
			continue
		}
		if workflow.KindOf(err) != workflow.KindInvalid {
			t.Errorf("kind = %s, want invalid: %v", workflow.KindOf(err), err)
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("the error quotes the password: %v", err)
		}
		if !strings.Contains(err.Error(), "malformed") {
			t.Errorf("the error does not say the URL is malformed: %v", err)
		}
	}
}

// runningFor reads s's per-user running index for the conformance suite.
func runningFor(s *redisstore.Store) func(ctx context.Context, userID string) ([]string, error) {
	return func(ctx context.Context, userID string) ([]string, error) {
		return redisstore.RunningFor(s, ctx, userID)
	}
}
