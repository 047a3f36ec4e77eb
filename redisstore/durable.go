package redisstore

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Writes the API acknowledges to a client — a create, a new round, a stop,
// a delete, and the claim of a new id — cannot be redone by the engine if
// a failover loses them (Redis replicates asynchronously). With
// Options.WaitReplicas, each is followed by WAIT on the same connection,
// so the answer leaves only once that many replicas have it (or
// WaitTimeout passed: then the write stands on the master alone, as
// without WAIT). The engine's own step commits skip WAIT: one lost by a
// failover is found by the version check and redone from the checkpoint.

// evalDurable runs script like evalPipelined and, with WaitReplicas set,
// waits for the replicas. On a cluster the commands queue adds (other
// slots) go first in their own pipeline, then the script and WAIT on one
// connection to the master of the slot of the call's keys: two round
// trips. On a single node all of it is one pipeline.
func (s *Store) evalDurable(ctx context.Context, queue func(redis.Pipeliner), script luaScript, call []any) (_ []any, err error) {
	if s.opts.WaitReplicas <= 0 {
		return s.evalPipelined(ctx, queue, script, call)
	}
	newPipe := s.rdb.Pipeline
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		if queue != nil {
			p := s.rdb.Pipeline()
			queue(p)
			// Index entries: a failure leaves entries readers skip, or
			// none, which the script's reply below decides on.
			_, _ = p.Exec(ctx)
			queue = nil
		}
		firstKey, _ := call[3].(string) // every key is in its slot
		node, nerr := cc.MasterForKey(ctx, firstKey)
		if nerr != nil {
			return nil, redisErr(nerr)
		}
		newPipe = node.Pipeline
		// The write goes to one node's client, outside the cluster
		// client's own error handling: a failure reloads the slot map
		// here (err is the function's result, set by the return below).
		defer func() {
			if err != nil {
				cc.ReloadState(ctx) // the slot may have moved
			}
		}()
	}
	wait := func(p redis.Pipeliner) { p.Do(ctx, "wait", s.opts.WaitReplicas, s.opts.WaitTimeout.Milliseconds()) }
	return evalIn(ctx, newPipe, queue, wait, script, call)
}

// setDurable runs SET with args and, with WaitReplicas set, WAIT on the
// same connection (on a cluster, one to the master of key's slot).
func (s *Store) setDurable(ctx context.Context, key string, value any, a redis.SetArgs) (string, error) {
	if s.opts.WaitReplicas <= 0 {
		return s.rdb.SetArgs(ctx, key, value, a).Result()
	}
	var p redis.Pipeliner
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return "", err
		}
		p = node.Pipeline()
		defer func() {
			if p != nil {
				cc.ReloadState(ctx)
			}
		}()
	} else {
		p = s.rdb.Pipeline()
	}
	cmd := p.SetArgs(ctx, key, value, a)
	p.Do(ctx, "wait", s.opts.WaitReplicas, s.opts.WaitTimeout.Milliseconds())
	_, _ = p.Exec(ctx)
	v, err := cmd.Result()
	if err == nil || errors.Is(err, redis.Nil) {
		p = nil
	}
	return v, err
}

// mastersHaveReplicas reports whether every master of the cluster has at
// least one connected replica (CLUSTER NODES).
func mastersHaveReplicas(ctx context.Context, c *redis.ClusterClient) bool {
	out, err := c.ClusterNodes(ctx).Result()
	return err == nil && replicated(out)
}

// replicated reports whether CLUSTER NODES output shows a connected
// replica for every master that serves slots.
func replicated(out string) bool {
	masters := map[string]bool{}
	replicated := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || strings.Contains(f[2], "fail") {
			continue
		}
		switch {
		case strings.Contains(f[2], "master") && len(f) > 8: // serves slots
			masters[f[0]] = true
		case strings.Contains(f[2], "slave") && f[7] == "connected":
			replicated[f[3]] = true
		}
	}
	if len(masters) == 0 {
		return false
	}
	for id := range masters {
		if !replicated[id] {
			return false
		}
	}
	return true
}

// reloadOnNetworkError is a hook of the cluster client Open makes: a
// command that could not reach its node (a master that died) makes the
// client reload the slot map at once, so it finds the promoted replica
// within a failover's time instead of at its next periodic reload.
type reloadOnNetworkError struct{ c *redis.ClusterClient }

func (h reloadOnNetworkError) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnNetworkError) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.check(ctx, err)
		return err
	}
}

func (h reloadOnNetworkError) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.check(ctx, err)
		for _, c := range cmds {
			h.check(ctx, c.Err())
		}
		return err
	}
}

func (h reloadOnNetworkError) check(ctx context.Context, err error) {
	var reply redis.Error
	var netErr net.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil):
	case errors.As(err, &reply):
		if transient(reply.Error()) {
			h.c.ReloadState(ctx)
		}
	case errors.As(err, &netErr), strings.Contains(err.Error(), "connection refused"), errors.Is(err, net.ErrClosed):
		h.c.ReloadState(ctx)
	}
}
