package redact

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// Prompt returns a copy of p with every message's content redacted.
func (r *Redactor) Prompt(p []workflow.PromptMessage) []workflow.PromptMessage {
	if p == nil {
		return nil
	}
	out := make([]workflow.PromptMessage, len(p))
	for i, m := range p {
		out[i] = workflow.PromptMessage{Role: m.Role, Content: r.String(m.Content)}
	}
	return out
}

// Trace returns a copy of t with its prompt, response, parse outcome and
// error redacted.
func (r *Redactor) Trace(t workflow.Trace) workflow.Trace {
	t.Prompt = r.Prompt(t.Prompt)
	t.Response = r.String(t.Response)
	t.Parsed = r.JSON(t.Parsed)
	t.Error = r.String(t.Error)
	return t
}

// Traces decorates store so that every trace is redacted by r before it is
// stored, by AppendTrace or with a Commit: a safety net behind the redaction of action output, which
// already keeps secrets out of every prompt. Everything else, including
// the store's per-workflow trace cap and retention, is the wrapped store's.
// Wrap the store the engine writes through with it.
func Traces(store workflow.Store, r *Redactor) workflow.Store {
	return &tracesStore{Store: store, r: r}
}

type tracesStore struct {
	workflow.Store
	r *Redactor
}

// AppendTrace stores the redacted trace.
func (s *tracesStore) AppendTrace(ctx context.Context, t workflow.Trace) error {
	return s.Store.AppendTrace(ctx, s.r.Trace(t))
}

// Commit applies c with its traces redacted (the caller's slice is left
// as it was).
func (s *tracesStore) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	if len(c.Traces) > 0 {
		traces := make([]workflow.Trace, len(c.Traces))
		for i, t := range c.Traces {
			traces[i] = s.r.Trace(t)
		}
		c.Traces = traces
	}
	return s.Store.Commit(ctx, c)
}
