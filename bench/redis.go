package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// RoundTrips is a go-redis hook counting round trips to Redis: one per
// command sent alone, one per pipeline (a MULTI/EXEC transaction or an
// EVALSHA with its fallback counts as what go-redis sends).
type RoundTrips struct{ n atomic.Int64 }

var _ redis.Hook = (*RoundTrips)(nil)

// Load returns the round trips counted so far.
func (r *RoundTrips) Load() int64 { return r.n.Load() }

// DialHook passes dials through uncounted.
func (r *RoundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts one round trip per command.
func (r *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts one round trip per pipeline.
func (r *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// roundTripsOf returns the round-trip counter of a system on Redis, nil
// for any other.
func roundTripsOf(sys System) *RoundTrips {
	switch r := sys.(type) {
	case *RedisTwostep:
		return r.RoundTrips
	case *RedisFloor:
		return r.RoundTrips
	}
	return nil
}

// RedisTwostep is Twostep over a redisstore on its own key prefix, with
// its round trips counted.
type RedisTwostep struct {
	*Twostep
	RoundTrips *RoundTrips
	client     *redis.Client
	info       *redis.Client // no hook: its round trips are not counted
	prefix     string
}

// ServerCPU returns the CPU time redis-server has used so far (INFO cpu:
// used_cpu_user + used_cpu_sys). It asks through a client of its own, so
// the round trip is not counted. The figure is
// the benchmark's only when nothing else uses that Redis.
func (r *RedisTwostep) ServerCPU(ctx context.Context) (time.Duration, error) {
	info, err := r.info.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu %s: %w", k, err)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}

// NewTwostepRedis starts Twostep over a redisstore at url, under the key
// prefix "twostep-bench:<random>" that Close deletes (no FLUSHDB: the
// database may be shared).
func NewTwostepRedis(ctx context.Context, url string, task Task) (*RedisTwostep, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client := redis.NewClient(o)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis at REDIS_URL: %w", err)
	}
	rt := &RoundTrips{}
	client.AddHook(rt)
	prefix := "twostep-bench:" + workflow.NewID("")
	t, err := NewTwostep(redisstore.New(client, redisstore.Options{KeyPrefix: prefix}), task)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return &RedisTwostep{Twostep: t, RoundTrips: rt, client: client, info: redis.NewClient(o), prefix: prefix}, nil
}

// Close shuts the engine down, deletes the prefix's keys and closes the
// client.
func (r *RedisTwostep) Close(ctx context.Context) error {
	err := r.Twostep.Close(ctx)
	iter := r.client.Scan(ctx, 0, r.prefix+":*", 500).Iterator()
	for iter.Next(ctx) {
		err = errors.Join(err, r.client.Del(ctx, iter.Val()).Err())
	}
	return errors.Join(err, iter.Err(), r.client.Close(), r.info.Close())
}
