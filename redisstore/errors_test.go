package redisstore

import (
	"context"
	"errors"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// replyError is an error reply as go-redis returns it (a redis.Error).
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestRedisErrKinds: the replies of a cluster failing over are an outage
// (KindUnavailable, so a round retries its commit instead of failing);
// other error replies are internal; connection errors are an outage.
func TestRedisErrKinds(t *testing.T) {
	tests := []struct {
		err  error
		want workflow.Kind
	}{
		{replyError("CLUSTERDOWN The cluster is down"), workflow.KindUnavailable},
		{replyError("TRYAGAIN Multiple keys request during rehashing of slot"), workflow.KindUnavailable},
		{replyError("MOVED 3999 127.0.0.1:6381"), workflow.KindUnavailable},
		{replyError("ASK 3999 127.0.0.1:6381"), workflow.KindUnavailable},
		{replyError("LOADING Redis is loading the dataset in memory"), workflow.KindUnavailable},
		{replyError("READONLY You can't write against a read only replica."), workflow.KindUnavailable},
		{replyError("MASTERDOWN Link with MASTER is down"), workflow.KindUnavailable},
		{replyError("ERR Error running script: attempt to compare nil"), workflow.KindInternal},
		{replyError("WRONGTYPE Operation against a key holding the wrong kind of value"), workflow.KindInternal},
		{replyError("ASKING is not the same"), workflow.KindInternal},
		{errors.New("dial tcp 127.0.0.1:7001: connect: connection refused"), workflow.KindUnavailable},
	}
	for _, tc := range tests {
		if got := workflow.KindOf(redisErr(tc.err)); got != tc.want {
			t.Errorf("redisErr(%q) kind = %q, want %q", tc.err, got, tc.want)
		}
	}
	if err := redisErr(context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("redisErr(context.Canceled) = %v", err)
	}
}

// TestReplicated reads CLUSTER NODES as Open does to decide whether the
// API's writes wait for a replica: only when every master serving slots
// has a connected replica.
func TestReplicated(t *testing.T) {
	const (
		m1 = "a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460\n"
		m2 = "b2 127.0.0.1:7002@17002 master - 0 1 2 connected 5461-16383\n"
		r1 = "c3 127.0.0.1:7003@17003 slave a1 0 1 1 connected\n"
		r2 = "d4 127.0.0.1:7004@17004 slave b2 0 1 2 connected\n"
	)
	tests := []struct {
		out  string
		want bool
	}{
		{m1 + m2 + r1 + r2, true},
		{m1 + m2 + r1, false},
		{m1 + m2, false},
		{m1 + m2 + r1 + "d4 127.0.0.1:7004@17004 slave b2 0 1 2 disconnected\n", false},
		{m1 + m2 + r1 + "d4 127.0.0.1:7004@17004 slave,fail b2 0 1 2 connected\n", false},
		{"", false},
	}
	for i, tc := range tests {
		if got := replicated(tc.out); got != tc.want {
			t.Errorf("case %d: replicated = %v, want %v", i, got, tc.want)
		}
	}
}
