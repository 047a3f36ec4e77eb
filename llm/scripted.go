package llm

import (
	"context"
	"errors"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// ErrBlock, returned by a NewScriptedFunc function, makes that call block
// until its context is done and then return the context's error: the stand-in
// for a slow provider in stop and cancellation tests.
var ErrBlock = errors.New("llm: scripted call blocks until cancelled")

// Scripted is a workflow.Model that replies from a script instead of a
// provider, for tests and the offline demo. It records every call, including
// calls that fail or block. It is safe for concurrent use; with concurrent
// callers, list replies are handed out in call order.
type Scripted struct {
	mu      sync.Mutex
	replies []string
	next    int
	fn      func(req workflow.ModelRequest) (string, error)
	calls   []workflow.ModelRequest
}

var _ workflow.Model = (*Scripted)(nil)

// NewScripted returns a model that answers the n-th call with replies[n].
// A call beyond the list fails with KindUnavailable, so a test that makes
// more calls than it scripted fails loudly.
func NewScripted(replies ...string) *Scripted {
	return &Scripted{replies: append([]string(nil), replies...)}
}

// NewScriptedFunc returns a model that answers each call with f(req). An
// error from f is returned unchanged (return a *workflow.Error to choose its
// kind); ErrBlock blocks the call until its context is done. f may be called
// concurrently.
func NewScriptedFunc(f func(req workflow.ModelRequest) (string, error)) *Scripted {
	return &Scripted{fn: f}
}

// Name returns "scripted/scripted", matching Model.Name's form.
func (s *Scripted) Name() string { return ProviderScripted + "/" + DefaultModel(ProviderScripted) }

// Calls returns a copy of every request received so far, in arrival order.
func (s *Scripted) Calls() []workflow.ModelRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]workflow.ModelRequest, len(s.calls))
	for i, c := range s.calls {
		c.Messages = append([]workflow.PromptMessage(nil), c.Messages...)
		out[i] = c
	}
	return out
}

// Generate records req and answers it from the script. A context that is
// already done is honoured first, without consuming a reply. Usage is
// estimated from the prompt and reply text with ApproxTokens.
func (s *Scripted) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	req.Messages = append([]workflow.PromptMessage(nil), req.Messages...)
	s.mu.Lock()
	s.calls = append(s.calls, req)
	n := len(s.calls)
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return workflow.ModelResponse{}, err
	}
	text, err := s.reply(req, n)
	if errors.Is(err, ErrBlock) {
		<-ctx.Done()
		return workflow.ModelResponse{}, ctx.Err()
	}
	if err != nil {
		return workflow.ModelResponse{}, err
	}
	return workflow.ModelResponse{
		Text:             text,
		Model:            s.Name(),
		PromptTokens:     promptTokens(req.Messages, ApproxTokens),
		CompletionTokens: ApproxTokens(text),
	}, nil
}

// reply returns the scripted answer to call number n (from 1).
func (s *Scripted) reply(req workflow.ModelRequest, n int) (string, error) {
	if s.fn != nil {
		return s.fn(req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.replies) {
		return "", workflow.Errorf(workflow.KindUnavailable,
			"scripted model: no reply left for call %d (%d scripted)", n, len(s.replies))
	}
	r := s.replies[s.next]
	s.next++
	return r, nil
}
