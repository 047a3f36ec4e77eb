package enginetest

import (
	"context"
	"strings"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// Call is one model call as the Model saw it.
type Call struct {
	Stage  workflow.Stage
	Prompt []workflow.PromptMessage
	// Reply is the text returned ("" when the call failed).
	Reply string
	// Err is the error returned, if any.
	Err error
}

// Text returns the whole prompt as one string.
func (c Call) Text() string {
	var b strings.Builder
	for _, m := range c.Prompt {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// Model is a scripted workflow.Model. Reply decides each answer from the
// call's index (0-based, over finished and failed calls) and request; a
// Reply that returns Block makes the call wait until its context is
// cancelled. Every call is recorded. Safe for concurrent use.
type Model struct {
	Reply func(n int, req workflow.ModelRequest) (string, error)

	mu    sync.Mutex
	n     int
	calls []Call
}

var _ workflow.Model = (*Model)(nil)

// Block is a sentinel reply: the call blocks until ctx is cancelled.
const Block = "\x00block"

// Script returns a Model answering with replies in order; past the end it
// answers with an error of kind KindUnavailable.
func Script(replies ...string) *Model {
	return &Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n < len(replies) {
			return replies[n], nil
		}
		return "", workflow.Errorf(workflow.KindUnavailable, "script exhausted after %d replies", len(replies))
	}}
}

// Generate answers req from the script.
func (m *Model) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	m.mu.Lock()
	n := m.n
	m.n++
	m.mu.Unlock()
	text, err := m.Reply(n, req)
	if err == nil && text == Block {
		<-ctx.Done()
		text, err = "", ctx.Err()
	}
	if err == nil && ctx.Err() != nil {
		text, err = "", ctx.Err()
	}
	m.mu.Lock()
	m.calls = append(m.calls, Call{Stage: req.Stage, Prompt: req.Messages, Reply: text, Err: err})
	m.mu.Unlock()
	if err != nil {
		return workflow.ModelResponse{}, err
	}
	var size int
	for _, p := range req.Messages {
		size += len(p.Content)
	}
	return workflow.ModelResponse{Text: text, Model: "scripted", PromptTokens: size/4 + 1, CompletionTokens: len(text)/4 + 1}, nil
}

// Calls returns every recorded call, in order.
func (m *Model) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.calls...)
}

// Finished returns the replies of the calls that succeeded, in order.
func (m *Model) Finished() []string {
	var out []string
	for _, c := range m.Calls() {
		if c.Err == nil {
			out = append(out, c.Reply)
		}
	}
	return out
}
