package redisstore_test

import (
	"context"
	"os"
	"strings"
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
		return storetest.Fixture{
			Store:    redisstore.New(client, opts),
			TraceCap: testTraceCap,
			KeysLeft: func(t *testing.T, id string) int { return keysLeft(t, client, opts.KeyPrefix, id) },
			Advance:  mr.FastForward,
		}
	})
}

func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	storetest.RunFixture(t, func(t *testing.T) storetest.Fixture {
		client := realClient(t, url)
		opts := redisstore.Options{KeyPrefix: uniquePrefix(t, client), TraceCap: testTraceCap}
		return storetest.Fixture{
			Store:    redisstore.New(client, opts),
			TraceCap: testTraceCap,
			KeysLeft: func(t *testing.T, id string) int { return keysLeft(t, client, opts.KeyPrefix, id) },
		}
	})
}

// redisURL returns REDIS_URL, skipping the test when it is unset — unless
// CI is set: there a missing Redis is a failure.
func redisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDIS_URL is not set; CI must test against a real Redis")
		}
		t.Skip("REDIS_URL is not set")
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

// uniquePrefix returns a key prefix no other test uses and deletes every
// key under it when the test ends.
func uniquePrefix(t testing.TB, client *redis.Client) string {
	prefix := "twosteptest:" + strings.ToLower(workflow.NewID(""))
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+":*", 500).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("cleaning up %s: %v", prefix, err)
		}
	})
	return prefix
}

// keysLeft counts what Redis still holds for a workflow: keys with its hash
// tag, its entry in the running set, in any user's running set, in any
// user's listing, in the global listing and in the trace index.
func keysLeft(t *testing.T, client *redis.Client, prefix, id string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	scan := func(pattern string, each func(key string)) {
		iter := client.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			each(iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatalf("SCAN %s: %v", pattern, err)
		}
	}
	scan(prefix+":{"+id+"}:*", func(string) { n++ })
	if client.SIsMember(ctx, prefix+":running", id).Val() {
		n++
	}
	scan(prefix+":running:u:*", func(key string) {
		if client.SIsMember(ctx, key, id).Val() {
			n++
		}
	})
	scan(prefix+":user:*", func(key string) {
		if client.ZScore(ctx, key, id).Err() == nil {
			n++
		}
	})
	if client.ZScore(ctx, prefix+":workflows", id).Err() == nil {
		n++
	}
	scan(prefix+":trace:*", func(key string) {
		if client.Get(ctx, key).Val() == id {
			n++
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
