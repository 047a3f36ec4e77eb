package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// The round trips twostep makes on Redis for a round of the task, which
// RedisFloor makes too. twostep makes three for each tool-call step
// (select, parameterize, execute and commit; redisstore's
// TestRoundTripsPerStep holds it to that), two for the answer step, and
// five for the round (the workflow id's claim, the create, the round's
// claim with its load, the removal of its running-set entry after the last
// commit, the release): 3·steps + 4 in all, which the floor makes as three
// a step and four a round. TestRedisFloorMakesTwostepsRoundTrips checks
// twostep's count against it; BenchmarkStep's redis-rt/step shows both.
const (
	floorTripsPerStep  = 3
	floorTripsPerRound = 4
)

// floorScript sets one key, as a commit script does (with much less work
// inside Redis, which is not this process's CPU).
var floorScript = redis.NewScript(`redis.call('SET', KEYS[1], ARGV[1]) return 1`)

// RedisFloor is not an agent loop. For each step of the task it makes the
// Redis round trips twostep makes on Redis, and nothing else: each one a
// pipeline of a SET of a trace-sized value and an EVALSHA, as a twostep
// commit sends. Its CPU a step is the floor under twostep-redis's on this
// machine and at this moment: what the round trips alone cost this process
// (go-redis, the system calls, the Go scheduler's wake-ups while it waits),
// whatever the engine does between them. Its result is the task's answer
// and tool inputs, written by hand, so that the harness's check holds.
type RedisFloor struct {
	task       Task
	client     *redis.Client
	RoundTrips *RoundTrips
	prefix     string
	value, arg string
	inputs     []string
}

// NewRedisFloor connects to the Redis at url, under the key prefix
// "twostep-bench:<random>" that Close deletes.
func NewRedisFloor(ctx context.Context, url string, task Task) (*RedisFloor, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client := redis.NewClient(o)
	if err := floorScript.Load(ctx, client).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis at REDIS_URL: %w", err)
	}
	rt := &RoundTrips{}
	client.AddHook(rt)
	return &RedisFloor{
		task: task, client: client, RoundTrips: rt, prefix: "twostep-bench:" + workflow.NewID(""),
		// A Stage 1 trace and a state commit's argument, in round figures.
		value: strings.Repeat("t", 6<<10), arg: strings.Repeat("s", 1<<10),
	}, nil
}

// Run makes a round's round trips.
func (f *RedisFloor) Run(ctx context.Context) error {
	f.inputs = f.inputs[:0]
	for range floorTripsPerRound {
		if err := f.roundTrip(ctx); err != nil {
			return err
		}
	}
	for k := range f.task.Steps() {
		for range floorTripsPerStep {
			if err := f.roundTrip(ctx); err != nil {
				return err
			}
		}
		if k < f.task.Calls {
			f.inputs = append(f.inputs, ToolInput(k+1))
		}
	}
	return nil
}

func (f *RedisFloor) roundTrip(ctx context.Context) error {
	pipe := f.client.Pipeline()
	pipe.Set(ctx, f.prefix+":trace", f.value, 0)
	floorScript.EvalSha(ctx, pipe, []string{f.prefix + ":state"}, f.arg)
	_, err := pipe.Exec(ctx)
	return err
}

// Result returns the task's answer and the tool inputs Run listed.
func (f *RedisFloor) Result(context.Context) (Result, error) {
	return Result{Answer: Answer, Inputs: append([]string(nil), f.inputs...)}, nil
}

// Forget does nothing: Run overwrites the same two keys.
func (f *RedisFloor) Forget(context.Context) error { return nil }

// Close deletes the keys and closes the client.
func (f *RedisFloor) Close(ctx context.Context) error {
	err := f.client.Del(ctx, f.prefix+":trace", f.prefix+":state").Err()
	return errors.Join(err, f.client.Close())
}
