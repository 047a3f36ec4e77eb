package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Redacted replaces every secret value in a redacted text.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest value a Redactor scrubs: shorter values
// cannot be told apart from ordinary text (scrubbing "ab" would mangle every
// prompt), so configuration should never accept them as credentials.
const MinSecretLen = 6

// Redactor replaces known secret values — connection credentials
// (actions.Registry.Secrets), LLM API keys, gateway tokens — with Redacted.
// Each secret is also matched in its JSON-escaped forms, so a secret
// quoted inside a JSON document (a parsed reply, a history entry) is
// scrubbed too. A Redactor is immutable and safe for concurrent use; the
// nil *Redactor redacts nothing.
type Redactor struct {
	replacer *strings.Replacer
	secrets  int
}

// NewRedactor returns a Redactor for secrets; empty values and values
// shorter than MinSecretLen are ignored.
func NewRedactor(secrets ...string) *Redactor {
	var forms []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) < MinSecretLen {
			continue
		}
		forms = append(forms, s)
		for _, escaped := range jsonForms(s) {
			if escaped != s {
				forms = append(forms, escaped)
			}
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	return &Redactor{replacer: strings.NewReplacer(pairs...), secrets: len(forms)}
}

// jsonForms returns s as it appears inside a JSON string, with and without
// HTML escaping (encoding/json escapes <, > and & by default).
func jsonForms(s string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			out = append(out, q[1:len(q)-1])
		}
	}
	return out
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || r.secrets == 0 {
		return s
	}
	return r.replacer.Replace(s)
}

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

// JSON returns raw with every secret replaced. The replacement is valid
// inside a JSON string, so valid JSON stays valid.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return json.RawMessage(r.String(string(raw)))
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

// RedactTraces decorates store so that every trace is redacted by r before
// it is stored. Everything else, including the store's per-workflow trace
// cap and retention, is the wrapped store's. Wrap the store the engine
// writes through with it.
func RedactTraces(store workflow.Store, r *Redactor) workflow.Store {
	return &redactingStore{Store: store, r: r}
}

type redactingStore struct {
	workflow.Store
	r *Redactor
}

// AppendTrace stores the redacted trace.
func (s *redactingStore) AppendTrace(ctx context.Context, t workflow.Trace) error {
	return s.Store.AppendTrace(ctx, s.r.Trace(t))
}
