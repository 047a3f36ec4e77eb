package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// pipelines records the command names of every pipeline a client sends.
type pipelines struct {
	mu   sync.Mutex
	sent [][]string
}

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = strings.ToLower(c.Name())
		}
		p.mu.Lock()
		p.sent = append(p.sent, names)
		p.mu.Unlock()
		return next(ctx, cmds)
	}
}

// take returns the pipelines sent since the last take.
func (p *pipelines) take() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.sent
	p.sent = nil
	return out
}

// A commit whose script Redis has not cached (after SCRIPT FLUSH, or a
// restart) is sent again with EVAL: with WaitReplicas, an API commit's EVAL
// is still followed by WAIT in its pipeline; a run's commit (with a fence)
// never waits. Both are applied once.
func TestCommitResendsAnUncachedScript(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	rec := &pipelines{}
	client.AddHook(rec)
	s := redisstore.New(client, redisstore.Options{KeyPrefix: "ev", WaitReplicas: 1, WaitTimeout: time.Millisecond})
	ctx := context.Background()
	flush := func() {
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}

	// evalScripts returns the pipelines that sent a script, as
	// "evalsha"/"eval" followed by "+wait" when WAIT came after it.
	evalScripts := func() []string {
		var out []string
		for _, names := range rec.take() {
			for i, n := range names {
				if n != "evalsha" && n != "eval" {
					continue
				}
				if slices.Contains(names[i+1:], "wait") {
					n += "+wait"
				}
				out = append(out, n)
			}
		}
		return out
	}

	flush() // nothing cached: the create's EVALSHA fails with NOSCRIPT
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3}
	created, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := evalScripts(), []string{"evalsha+wait", "eval+wait"}; !slices.Equal(got, want) {
		t.Errorf("an API commit's script went as %v, want %v", got, want)
	}

	fence, err := s.ClaimRound(ctx, wf.ID, "here", time.Minute)
	if err != nil || fence == 0 {
		t.Fatalf("ClaimRound: %d, %v", fence, err)
	}
	rec.take()
	flush()
	next := created.Clone()
	next.Step++
	stepped, msgs, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: created.Version, Fence: fence,
		Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: 1, Role: workflow.RoleAssistant, Text: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := evalScripts(), []string{"evalsha", "eval"}; !slices.Equal(got, want) {
		t.Errorf("a run's commit's script went as %v, want %v", got, want)
	}
	all, err := s.Messages(ctx, wf.ID, 0, 0)
	if err != nil || len(all) != 2 || stepped.Version != created.Version+1 || msgs[0].Seq != 2 {
		t.Errorf("after both commits: %d messages (%v), version %d, seq %d; want 2 messages, version %d, seq 2",
			len(all), err, stepped.Version, msgs[0].Seq, created.Version+1)
	}
}
