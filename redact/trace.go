package redact

import (
	"context"
	"maps"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// Prompt returns p with every message's content redacted: a copy when
// some message holds a secret, p itself when none does.
func (r *Redactor) Prompt(p []workflow.PromptMessage) []workflow.PromptMessage {
	i := slices.IndexFunc(p, func(m workflow.PromptMessage) bool { return r.Contains(m.Content) })
	if i < 0 {
		return p
	}
	out := slices.Clone(p)
	for ; i < len(out); i++ {
		out[i].Content = r.String(out[i].Content)
	}
	return out
}

// Trace returns t with its prompt, response, parse outcome and error
// redacted. Only the fields holding a secret are copied; the caller's
// trace is never changed.
func (r *Redactor) Trace(t workflow.Trace) workflow.Trace {
	t, _ = r.trace(t)
	return t
}

// trace is Trace, also reporting whether any field held a secret.
func (r *Redactor) trace(t workflow.Trace) (workflow.Trace, bool) {
	if r.Empty() {
		return t, false
	}
	prompt, response, parsed, errText := r.Prompt(t.Prompt), r.String(t.Response), r.JSON(t.Parsed), r.String(t.Error)
	// Prompt and JSON return their argument itself when it holds no
	// secret, and a copy otherwise.
	changed := len(prompt) > 0 && &prompt[0] != &t.Prompt[0] || len(parsed) > 0 && &parsed[0] != &t.Parsed[0] ||
		response != t.Response || errText != t.Error
	t.Prompt, t.Response, t.Parsed, t.Error = prompt, response, parsed, errText
	if inputs, ok := r.inputs(t.Inputs); ok {
		t.Inputs, changed = inputs, true
	}
	if paths, ok := r.strings(t.Ungrounded); ok {
		t.Ungrounded, changed = paths, true
	}
	return t, changed
}

// inputs returns a redacted copy of m and true when some value holds a
// secret; m itself and false otherwise.
func (r *Redactor) inputs(m map[string]string) (map[string]string, bool) {
	var out map[string]string
	for k, v := range m {
		if !r.Contains(v) {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		out[k] = r.String(v)
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// strings returns ss redacted, a copy, and true when one of them held a
// secret; ss itself and false otherwise.
func (r *Redactor) strings(ss []string) ([]string, bool) {
	for i, s := range ss {
		if red := r.String(s); red != s {
			out := append([]string(nil), ss...)
			out[i] = red
			for j := i + 1; j < len(out); j++ {
				out[j] = r.String(out[j])
			}
			return out, true
		}
	}
	return ss, false
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

// Unwrap returns the wrapped store (workflow.StoreWrapper), so its
// capabilities (the approval index, the round loader, the usage counters
// ...) are used directly: none of them writes a trace.
func (s *tracesStore) Unwrap() workflow.Store { return s.Store }

// Commit applies c with its traces redacted (the caller's slice is left
// as it was).
func (s *tracesStore) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	var traces []workflow.Trace // a copy, made at the first trace holding a secret
	for i, t := range c.Traces {
		t, changed := s.r.trace(t)
		if changed && traces == nil {
			traces = slices.Clone(c.Traces)
		}
		if traces != nil {
			traces[i] = t
		}
	}
	if traces != nil {
		c.Traces = traces
	}
	return s.Store.Commit(ctx, c)
}
