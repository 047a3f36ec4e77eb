// Package scripted is the one workflow.Model that replies from a script
// instead of a provider: the tests' model, the offline gateway's
// (LLM_PROVIDER=scripted) and the demo's. It depends on no provider SDK,
// so the engine's test harnesses and the conformance suites can use it
// without pulling in langchaingo.
package scripted

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// ErrBlock, returned by a Model.Reply function, makes that call block
// until its context is done and then return the context's error: the
// stand-in for a slow provider in stop and cancellation tests.
var ErrBlock = errors.New("scripted: call blocks until cancelled")

// Model replies from a script. Its Reply function answers each call by
// its number and request (New builds one from a list), and it records every call
// as it arrives, including calls that fail or block, unless Forget is set.
// Usage is estimated from the prompt and reply text as a provider that
// reports none would be (workflow.ApproxTokens and workflow.PromptTokens). It is safe for concurrent use;
// calls are numbered in arrival order.
//
// The zero value with only Reply set is ready to use:
//
//	m := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) { ... }}
type Model struct {
	// Reply answers call n (0-based, counting every call in arrival order,
	// failed ones too) with req. An error is returned unchanged (return a
	// *workflow.Error to choose its kind); ErrBlock blocks the call until
	// its context is done. Reply may be called concurrently; it is not
	// called for a call whose context is already done.
	Reply func(n int, req workflow.ModelRequest) (string, error)
	// Model names the model in replies ("scripted" when empty); Name
	// returns it after the provider, "scripted/<Model>".
	Model string
	// Forget keeps no calls (Calls returns none): for a model that serves
	// for as long as a gateway runs.
	Forget bool

	mu    sync.Mutex
	n     int // calls so far
	calls []Call
}

var _ workflow.Model = (*Model)(nil)

// Call is one call as a scripted Model received and answered it; a call
// still in progress (blocked, say) has no Reply and no Err yet.
type Call struct {
	// ModelRequest is the request, its Messages copied.
	workflow.ModelRequest
	// Reply is the text returned ("" when the call failed).
	Reply string
	// Err is the error returned, if any.
	Err error
	// PromptTokens and CompletionTokens are the usage reported (0 when the
	// call failed).
	PromptTokens, CompletionTokens int
}

// Text returns the call's whole prompt as one string, each message's
// content followed by a newline.
func (c Call) Text() string {
	var b strings.Builder
	for _, m := range c.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// New returns a model that answers call n with replies[n]; its
// Reply is that list as a function, for a Reply that wraps it. A call
// beyond the list fails with KindUnavailable, so a test that makes more
// calls than it scripted fails loudly.
func New(replies ...string) *Model {
	replies = append([]string(nil), replies...)
	return &Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n >= len(replies) {
			return "", workflow.Errorf(workflow.KindUnavailable,
				"scripted model: no reply left for call %d (%d scripted)", n+1, len(replies))
		}
		return replies[n], nil
	}}
}

// Name returns the provider and the model, "scripted/scripted" unless Model
// is set.
func (s *Model) Name() string { return provider + "/" + s.model() }

func (s *Model) model() string {
	if s.Model == "" {
		return provider
	}
	return s.Model
}

// Calls returns a copy of every call received so far, in arrival order.
func (s *Model) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Messages = append([]workflow.PromptMessage(nil), c.Messages...)
		out[i] = c
	}
	return out
}

// Generate records req and answers it from the script. A context that is
// already done is honoured first, without asking Reply.
func (s *Model) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	req.Messages = append([]workflow.PromptMessage(nil), req.Messages...)
	s.mu.Lock()
	n := s.n
	s.n++
	if !s.Forget {
		s.calls = append(s.calls, Call{ModelRequest: req})
	}
	s.mu.Unlock()
	text, err := s.answer(ctx, n, req)
	var resp workflow.ModelResponse
	if err == nil {
		resp = workflow.ModelResponse{
			Text:             text,
			Model:            s.model(),
			PromptTokens:     workflow.PromptTokens(req.Messages, workflow.ApproxTokens),
			CompletionTokens: workflow.ApproxTokens(text),
		}
	}
	if !s.Forget {
		s.mu.Lock()
		c := &s.calls[n]
		c.Reply, c.Err, c.PromptTokens, c.CompletionTokens = resp.Text, err, resp.PromptTokens, resp.CompletionTokens
		s.mu.Unlock()
	}
	return resp, err
}

// answer returns the script's reply to call n, or the context's error when
// it is done before or after the script answered.
func (s *Model) answer(ctx context.Context, n int, req workflow.ModelRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if s.Reply == nil {
		return "", workflow.Errorf(workflow.KindInternal, "scripted model: no Reply")
	}
	text, err := s.Reply(n, req)
	if errors.Is(err, ErrBlock) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return text, nil
}

// provider is the provider name of a scripted model (LLM_PROVIDER=scripted)
// and its model's default name.
const provider = "scripted"
