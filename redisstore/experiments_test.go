package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/experiments/experimentstest"
	"github.com/twostep/twostep/redisstore"
)

func TestExperimentStore(t *testing.T) {
	t.Parallel()
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		mr := miniredis.RunT(t)
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { _ = client.Close() })
		experimentstest.Run(t, redisstore.New(client, redisstore.Options{KeyPrefix: "ts"}), mr.FastForward)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		client := realClient(t, redisURL(t))
		experimentstest.Run(t, redisstore.New(client, redisstore.Options{KeyPrefix: uniquePrefix(t, client)}), time.Sleep)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		url := clusterURL(t)
		prefix := uniquePrefix(t, clusterClient(t, url))
		s, err := redisstore.Open(context.Background(), url, redisstore.Options{KeyPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		experimentstest.Run(t, s, time.Sleep)
	})
}
