// Package prompts builds each stage's prompt from the templates and the
// placeholder factory, and parses and validates each stage's reply.
//
// Builders are immutable and safe for concurrent use. Parsing treats the
// model's reply as untrusted input: it is size-capped before any work,
// extracted from fences or prose, repaired with a JSON-repair library,
// decoded strictly and validated against DESIGN §3; every rejection is a
// problem line that names what was wrong, fed back to the model with
// Feedback.
package prompts

import (
	"errors"

	"github.com/twostep/twostep/boundedcache"
	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// Options configures a Builder.
type Options struct {
	// HistoryBudget bounds Stage 1's sealed history section in
	// characters, compaction summary included; 0 means
	// placeholders.DefaultHistoryBudget (12,000). Past it, compaction
	// folds the oldest sealed entries into the summary.
	HistoryBudget int
	// LatestBudget is the latest history section's size in characters
	// past which its entries are sealed; 0 means
	// placeholders.DefaultLatestBudget.
	LatestBudget int
	// DocumentsIndexBudget bounds Stage 1's documents index in
	// characters; 0 means placeholders.DefaultDocumentsIndexBudget
	// (16,000).
	DocumentsIndexBudget int
	// HistoryLayout is how Stage 1 shows the history: LayoutSections
	// ("" too) or LayoutSingle.
	HistoryLayout HistoryLayout
	// LoopRepeats is the engine's engine.Config.LoopRepeats: when the
	// round's newest step has repeated an earlier one LoopRepeats-1 times,
	// Stage 1's VALIDATION_FEEDBACK carries workflow.LoopWarning. 0 means
	// workflow.DefaultLoopRepeats, negative turns the warning off.
	LoopRepeats int
	// NoCompaction turns React mode's history compaction off: the oldest
	// history entries are dropped when over budget, with no summary.
	NoCompaction bool
}

// Builder renders prompts from a template set.
type Builder struct {
	set  *templates.Set
	opts Options
	// placeholders memoizes the placeholder values (each action's
	// AVAILABLE_METHODS entry, history entries, Stage 2 cuts), so a
	// render does not re-parse every action's JSON Schema nor re-render
	// every history entry.
	placeholders *placeholders.Cache
	// stage1 caches the Stage 1 output schemas (Builder.Stage1Output).
	stage1 *boundedcache.Cache[string, workflow.OutputSchema]
	// stage2 caches the Stage 2 output schemas (Builder.Stage2Output).
	stage2 *boundedcache.Cache[stage2Key, Stage2Output]
}

// NewBuilder returns a Builder over set.
func NewBuilder(set *templates.Set, opts Options) *Builder {
	return &Builder{set: set, opts: opts, placeholders: placeholders.NewCache(),
		stage1: boundedcache.New[string, workflow.OutputSchema](maxCachedStage1Schemas, 0),
		stage2: boundedcache.New[stage2Key, Stage2Output](maxCachedStage2Outputs, 0)}
}

// Rendered is a fully rendered prompt: the template it came from, the chat
// messages to send and the value of every placeholder the template uses
// (for traces and the admin render route).
type Rendered struct {
	Template     string
	Messages     []workflow.PromptMessage
	Placeholders map[string]string
	// CachePrefix is how many leading Messages stay byte-identical from
	// call to call of the stage (workflow.ModelCall.CachePrefix): Stage
	// 1's up to the one with the history, Stage 2's up to the first with a
	// placeholder; 0 for the other templates.
	CachePrefix int
	// CacheSealed is how many leading Messages change only at a seal or
	// a new document (workflow.ModelCall.CacheSealed): Stage 1's through
	// the documents index in the sections layout; 0 for the others.
	CacheSealed int
}

// HistoryLayout is how Stage 1 shows the history (limits.historyLayout).
type HistoryLayout string

// The history layouts.
const (
	// LayoutSections shows the sealed section before the documents index
	// and the latest section after it (template "stage1"), so a provider's
	// prefix cache serves all but the newest entries.
	LayoutSections HistoryLayout = "sections"
	// LayoutSingle shows the history as one list, newest first
	// (WORKFLOW_HISTORY, template "stage1_single").
	LayoutSingle HistoryLayout = "single"
)

// Templates returns the builder's template set.
func (b *Builder) Templates() *templates.Set { return b.set }

// Render renders the set's template called name with values. A missing
// template is KindNotFound; a value missing for a key the template uses is
// KindInternal (the caller forgot it — never rendered as an empty string).
func (b *Builder) Render(name string, values map[string]string) (Rendered, error) {
	t, err := b.set.Get(name)
	if err != nil {
		if errors.Is(err, templates.ErrNotFound) {
			return Rendered{}, workflow.WrapKind(workflow.KindNotFound, err, "prompts.Render: no template %q", name)
		}
		return Rendered{}, workflow.WrapKind(workflow.KindInternal, err, "prompts.Render(%q)", name)
	}
	return RenderTemplate(t, values)
}

// RenderTemplate renders t with values (missingkey=error). It is what
// Render uses, and lets a caller render an override template that is not in
// the set (the admin render route). Placeholders holds exactly t's keys.
func RenderTemplate(t templates.Template, values map[string]string) (Rendered, error) {
	return renderTemplate(t, values, false)
}

// RenderTemplateFor is RenderTemplate for a reply of kind out: with
// templates.NativeOutput the template's reply shape is left out, as the
// modes do for a call answered natively (an experiment re-rendering a
// recorded call from its inputs).
func RenderTemplateFor(out templates.Output, t templates.Template, values map[string]string) (Rendered, error) {
	return renderFor(out, t, values, false)
}

// renderTemplate is RenderTemplate; owned says the caller hands values
// over (it built the map for this render and never touches it again), so
// when it holds exactly t's keys it becomes Placeholders as it is instead
// of being copied.
func renderTemplate(t templates.Template, values map[string]string, owned bool) (Rendered, error) {
	return renderFor(templates.TextOutput, t, values, owned)
}

// renderFor is renderTemplate for a reply of kind out.
func renderFor(out templates.Output, t templates.Template, values map[string]string, owned bool) (Rendered, error) {
	parts, err := t.RenderFor(out, values)
	if err != nil {
		return Rendered{}, renderError(t, err)
	}
	return rendered(t, parts, values, owned), nil
}

// renderError is the error of a failed render of t: KindInvalid, saying
// so, for a prompt over templates.MaxRenderedBytes (a 4xx on the admin
// render route, an explained failure of a real call's round); otherwise
// KindInternal (the caller forgot a value).
func renderError(t templates.Template, err error) error {
	if errors.Is(err, templates.ErrTooLarge) {
		return workflow.WrapKind(workflow.KindInvalid, err, "%s", err.Error())
	}
	return workflow.WrapKind(workflow.KindInternal, err, "prompts.Render(%q)", t.Name)
}

// rendered is the Rendered of t's parts rendered with values (owned: see
// renderTemplate).
func rendered(t templates.Template, parts []templates.Part, values map[string]string, owned bool) Rendered {
	r := Rendered{
		Template: t.Name,
		Messages: make([]workflow.PromptMessage, len(parts)),
	}
	for i, p := range parts {
		r.Messages[i] = workflow.PromptMessage{Role: p.Role, Content: p.Content}
	}
	// t.Render checked that values has every key of t: with as many
	// entries, it has no other.
	if owned && len(values) == t.NumKeys() {
		r.Placeholders = values
		return r
	}
	keys := t.Keys()
	r.Placeholders = make(map[string]string, len(keys))
	for _, k := range keys {
		r.Placeholders[k] = values[k]
	}
	return r
}

// render renders the override when it is set, else the set's template
// name, with values built for this render alone (see renderTemplate).
func (b *Builder) render(name string, override *templates.Template, values map[string]string) (Rendered, error) {
	t, err := b.template(name, override)
	if err != nil {
		return b.Render(name, values) // the same error
	}
	return renderTemplate(t, values, true)
}

// template returns the override when it is set, else the set's template
// name.
func (b *Builder) template(name string, override *templates.Template) (templates.Template, error) {
	if override != nil {
		return *override, nil
	}
	return b.set.Get(name)
}
