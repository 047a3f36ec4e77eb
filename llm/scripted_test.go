package llm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

func TestScriptedRepliesInOrderAndRecords(t *testing.T) {
	t.Parallel()
	s := NewScripted("first", "second")
	ctx := context.Background()
	for i, want := range []string{"first", "second"} {
		got, err := s.Generate(ctx, prompt(fmt.Sprintf("call %d", i)))
		if err != nil || got.Text != want {
			t.Fatalf("call %d = %+v, %v; want %q", i, got, err, want)
		}
		if got.Model != "scripted/scripted" || got.PromptTokens == 0 || got.CompletionTokens != ApproxTokens(want) {
			t.Errorf("call %d usage = %+v, want plausible estimates", i, got)
		}
	}
	_, err := s.Generate(ctx, prompt("one too many"))
	if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(err.Error(), "no reply left for call 3") {
		t.Errorf("third call = %v, want KindUnavailable naming the call", err)
	}
	calls := s.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, c.Messages[1].Content)
	}
	if diff := cmp.Diff([]string{"call 0", "call 1", "one too many"}, got); diff != "" {
		t.Errorf("Calls() user prompts (-want +got):\n%s", diff)
	}
	calls[0].Messages[1].Content = "mutated"
	if s.Calls()[0].Messages[1].Content != "call 0" {
		t.Error("Calls() shares memory with the recorder")
	}
}

func TestScriptedFuncErrorsAndPrompts(t *testing.T) {
	t.Parallel()
	refusal := workflow.Errorf(workflow.KindInvalid, "refused")
	s := NewScriptedFunc(func(req workflow.ModelRequest) (string, error) {
		last := req.Messages[len(req.Messages)-1].Content
		if last == "fail" {
			return "", refusal
		}
		return "echo: " + last, nil
	})
	got, err := s.Generate(context.Background(), prompt("ping"))
	if err != nil || got.Text != "echo: ping" {
		t.Errorf("Generate = %+v, %v; want the function's reply", got, err)
	}
	if _, err := s.Generate(context.Background(), prompt("fail")); !errors.Is(err, refusal) {
		t.Errorf("Generate = %v, want the function's error unchanged", err)
	}
}

func TestScriptedBlockUntilCancelled(t *testing.T) {
	t.Parallel()
	s := NewScriptedFunc(func(workflow.ModelRequest) (string, error) { return "", ErrBlock })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Generate(ctx, prompt("slow"))
		done <- err
	}()
	for len(s.Calls()) == 0 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Generate returned %v before cancel", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestScriptedCancelledContextKeepsReply(t *testing.T) {
	t.Parallel()
	s := NewScripted("kept")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Generate(ctx, prompt("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	got, err := s.Generate(context.Background(), prompt("y"))
	if err != nil || got.Text != "kept" {
		t.Errorf("Generate = %+v, %v; want the unconsumed reply", got, err)
	}
}

func TestScriptedConcurrentCallers(t *testing.T) {
	t.Parallel()
	const n = 50
	replies := make([]string, n)
	for i := range replies {
		replies[i] = fmt.Sprintf("r%02d", i)
	}
	s := NewScripted(replies...)
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.Generate(context.Background(), prompt("x"))
			if err != nil {
				t.Errorf("call: %v", err)
			}
			got[i] = resp.Text
		}()
	}
	wg.Wait()
	sort.Strings(got)
	if diff := cmp.Diff(replies, got); diff != "" {
		t.Errorf("each reply must be handed out exactly once (-want +got):\n%s", diff)
	}
	if len(s.Calls()) != n {
		t.Errorf("Calls() = %d, want %d", len(s.Calls()), n)
	}
}
