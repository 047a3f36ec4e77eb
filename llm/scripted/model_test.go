package scripted

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
	s := New("first", "second")
	ctx := context.Background()
	for i, want := range []string{"first", "second"} {
		req := prompt(fmt.Sprintf("call %d", i))
		got, err := s.Generate(ctx, req)
		if err != nil || got.Text != want {
			t.Fatalf("call %d = %+v, %v; want %q", i, got, err, want)
		}
		if got.Model != "scripted" || got.PromptTokens != workflow.PromptTokens(req.Messages, workflow.ApproxTokens) ||
			got.CompletionTokens != workflow.ApproxTokens(want) {
			t.Errorf("call %d usage = %+v, want the estimates of workflow.PromptTokens and ApproxTokens", i, got)
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
	var seen []int
	s := &Model{Model: "offline", Reply: func(n int, req workflow.ModelRequest) (string, error) {
		seen = append(seen, n)
		last := req.Messages[len(req.Messages)-1].Content
		if last == "fail" {
			return "", refusal
		}
		return "echo: " + last, nil
	}}
	got, err := s.Generate(context.Background(), prompt("ping"))
	if err != nil || got.Text != "echo: ping" || got.Model != "offline" {
		t.Errorf("Generate = %+v, %v; want the function's reply from model offline", got, err)
	}
	if _, err := s.Generate(context.Background(), prompt("fail")); !errors.Is(err, refusal) {
		t.Errorf("Generate = %v, want the function's error unchanged", err)
	}
	if !cmp.Equal(seen, []int{0, 1}) {
		t.Errorf("Reply saw calls %v, want [0 1]", seen)
	}
	if name := s.Name(); name != "scripted/offline" {
		t.Errorf("Name() = %q, want scripted/offline", name)
	}
	calls := s.Calls()
	if len(calls) != 2 || calls[0].Reply != "echo: ping" || calls[0].Err != nil ||
		calls[0].PromptTokens != got.PromptTokens || calls[0].CompletionTokens != got.CompletionTokens {
		t.Fatalf("calls = %+v, want the answered call with its usage first", calls)
	}
	if c := calls[1]; c.Reply != "" || !errors.Is(c.Err, refusal) || c.PromptTokens != 0 || c.CompletionTokens != 0 {
		t.Errorf("failed call recorded as %+v, want its error and no reply or usage", c)
	}
}

func TestScriptedCallRecordsRequest(t *testing.T) {
	t.Parallel()
	s := New("ok")
	req := prompt("hello")
	req.Stage = workflow.StageTwo
	req.JSON = true
	req.CacheKey, req.CachePrefix = "wf_1:stage2", 1
	resp, err := s.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Calls()[0]
	if diff := cmp.Diff(req, c.ModelRequest); diff != "" {
		t.Errorf("recorded request (-sent +recorded):\n%s", diff)
	}
	// A script has no provider cache: nothing is reported cached.
	if resp.CachedTokens != 0 || resp.CacheWriteTokens != 0 || resp.PromptTokens == 0 {
		t.Errorf("usage %+v, want prompt tokens and none cached", resp)
	}
	var want strings.Builder
	for _, m := range req.Messages {
		want.WriteString(m.Content + "\n")
	}
	if c.Text() != want.String() {
		t.Errorf("Text() = %q, want %q", c.Text(), want.String())
	}
}

func TestScriptedForgetKeepsNoCalls(t *testing.T) {
	t.Parallel()
	s := &Model{Forget: true, Reply: func(n int, _ workflow.ModelRequest) (string, error) { return fmt.Sprint(n), nil }}
	for i := range 3 {
		got, err := s.Generate(context.Background(), prompt("x"))
		if err != nil || got.Text != fmt.Sprint(i) {
			t.Fatalf("call %d = %+v, %v", i, got, err)
		}
	}
	if n := len(s.Calls()); n != 0 {
		t.Errorf("Calls() = %d, want none kept", n)
	}
}

func TestScriptedBlockUntilCancelled(t *testing.T) {
	t.Parallel()
	s := &Model{Reply: func(int, workflow.ModelRequest) (string, error) { return "", ErrBlock }}
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
	if c := s.Calls()[0]; c.Err != nil || c.Reply != "" {
		t.Errorf("the blocked call is recorded as %+v, want no outcome yet", c)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if c := s.Calls()[0]; !errors.Is(c.Err, context.Canceled) {
		t.Errorf("the returned call is recorded with %v, want context.Canceled", c.Err)
	}
}

// A call whose context is already done fails without asking Reply, but it
// is a call: it is recorded and numbered, so replies stay tied to call
// numbers.
func TestScriptedCancelledCallIsNumberedNotAnswered(t *testing.T) {
	t.Parallel()
	list := New("first", "second")
	var asked []int
	s := &Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		asked = append(asked, n)
		return list.Reply(n, req)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Generate(ctx, prompt("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	got, err := s.Generate(context.Background(), prompt("y"))
	if err != nil || got.Text != "second" {
		t.Errorf("Generate = %+v, %v; want call 1's reply", got, err)
	}
	if !cmp.Equal(asked, []int{1}) {
		t.Errorf("Reply asked for calls %v, want only [1]", asked)
	}
	if calls := s.Calls(); len(calls) != 2 || !errors.Is(calls[0].Err, context.Canceled) || calls[1].Reply != "second" {
		t.Errorf("calls = %+v, want the cancelled call then the answered one", calls)
	}
}

func TestScriptedConcurrentCallers(t *testing.T) {
	t.Parallel()
	const n = 50
	replies := make([]string, n)
	for i := range replies {
		replies[i] = fmt.Sprintf("r%02d", i)
	}
	s := New(replies...)
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

func prompt(text string) workflow.ModelRequest {
	return workflow.ModelRequest{
		Messages: []workflow.PromptMessage{{Role: "system", Content: "You answer in JSON."}, {Role: "user", Content: text}},
		Stage:    workflow.StageOne,
	}
}
