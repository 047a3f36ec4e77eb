package prompts

import (
	"strings"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// Stage1Input is the workflow state Stage 1 (and the action-plan mode's
// plan call) is rendered from.
type Stage1Input struct {
	// Workflow gives the current round; nil means the latest round among
	// Messages.
	Workflow *workflow.Workflow
	// Messages are the workflow's messages in seq order.
	Messages []workflow.Message
	// Actions are the methods to offer (all registered ones for React, the
	// top-K subset for the action-plan mode).
	Actions []workflow.ActionSpec
	// Connections are the connections the workflow's user owns.
	Connections []workflow.Connection
	// Feedback is the VALIDATION_FEEDBACK of a retry (see Feedback); ""
	// on a first attempt.
	Feedback string
	// Template, when set, is rendered instead of the set's template (an
	// admin's override under test).
	Template *templates.Template
	// Repeats, when set, is what workflow.Repeats finds in Messages for
	// the current round (a running round has it from Run.Repeats without
	// a pass over the round); nil: the loop warning looks for itself.
	Repeats *workflow.StepRepeats
	// Output is the kind of reply the call asks for: with NativeOutput the
	// template's reply shape is left out, as the provider is given it.
	Output templates.Output
}

// stage1Volatile are the Stage 1 placeholders whose values change from
// step to step: the messages before the first that uses one are the
// prompt's cacheable prefix (the first cache mark).
var stage1Volatile = []string{templates.KeyWorkflowHistory, templates.KeyWorkflowHistorySealed, templates.KeyWorkflowHistoryLatest,
	templates.KeyAvailableDocumentsIndex, templates.KeyValidationFeedback}

// stage1Step are the Stage 1 placeholders whose values change at every
// step, not only at a seal or a new document: the messages before the
// first that uses one end with the documents index (the second mark).
var stage1Step = []string{templates.KeyWorkflowHistory, templates.KeyWorkflowHistoryLatest, templates.KeyValidationFeedback}

// Stage1Values returns the value of every Stage 1 placeholder: USER_PROMPT,
// AVAILABLE_METHODS, AVAILABLE_DOCUMENTS_INDEX, AVAILABLE_CONNECTIONS_INDEX,
// WORKFLOW_HISTORY, WORKFLOW_HISTORY_SEALED, WORKFLOW_HISTORY_LATEST and
// VALIDATION_FEEDBACK.
func (b *Builder) Stage1Values(in Stage1Input) map[string]string {
	v, s := b.stage1Values(in)
	v[templates.KeyWorkflowHistory] = s.Single()
	return v
}

// stage1Values is Stage1Values without WORKFLOW_HISTORY, and the history
// sections it is made from.
func (b *Builder) stage1Values(in Stage1Input) (map[string]string, placeholders.Sections) {
	round := currentRound(in)
	s := b.placeholders.Sections(in.Messages, b.limits())
	return map[string]string{
		templates.KeyUserPrompt:                placeholders.UserPromptText(in.Messages, round),
		templates.KeyAvailableMethods:          b.placeholders.Methods(in.Actions),
		templates.KeyAvailableDocumentsIndex:   placeholders.DocumentsIndexWithin(in.Messages, round, b.opts.DocumentsIndexBudget),
		templates.KeyAvailableConnectionsIndex: placeholders.ConnectionsIndex(in.Connections),
		templates.KeyWorkflowHistorySealed:     s.SealedText(),
		templates.KeyWorkflowHistoryLatest:     s.LatestText(),
		templates.KeyValidationFeedback:        joinBlocks(b.loopWarning(in, round), in.Feedback),
	}, s
}

// limits are the history's limits (placeholders.Limits).
func (b *Builder) limits() placeholders.Limits {
	return placeholders.Limits{History: b.opts.HistoryBudget, Latest: b.opts.LatestBudget}
}

// stage1Template is the built-in Stage 1 template of the history layout:
// "stage1" (sections) or "stage1_single".
func (b *Builder) stage1Template() string {
	if b.opts.HistoryLayout == LayoutSingle {
		return templates.Stage1Single
	}
	return templates.Stage1
}

// loopWarning is the Stage 1 loop warning: workflow.LoopWarning, from
// in.Repeats when the caller has it.
func (b *Builder) loopWarning(in Stage1Input, round int) string {
	limit := workflow.LoopLimit(b.opts.LoopRepeats)
	if in.Repeats != nil {
		return in.Repeats.LoopWarning(limit)
	}
	return workflow.LoopWarning(in.Messages, round, limit)
}

// Stage1 renders the Stage 1 prompt for in.Output: template "stage1"
// (the history in its sealed and latest sections), or "stage1_single"
// when Options.HistoryLayout is single. WORKFLOW_HISTORY is written into
// the prompt entry by entry (placeholders.Sections.SinglePieces), not
// joined into a string first; Placeholders holds it as the prompt shows
// it. CachePrefix counts the messages before the first that shows the
// history, the documents index or the feedback: those stay byte-identical
// from step to step of a round. CacheSealed counts the messages before
// the first that shows the latest section, the single history or the
// feedback: those change only at a seal or when a document is added.
func (b *Builder) Stage1(in Stage1Input) (Rendered, error) {
	t := in.Template
	if t == nil {
		name := b.stage1Template()
		st, err := b.set.Get(name)
		if err != nil {
			return b.Render(name, b.Stage1Values(in)) // the same error
		}
		t = &st
	}
	values, sections := b.stage1Values(in)
	var buf [160]string
	pieces := sections.SinglePieces(buf[:0])
	parts, history, err := t.RenderPieces(in.Output, values, templates.KeyWorkflowHistory, pieces)
	if err != nil {
		return Rendered{}, renderError(*t, err)
	}
	if t.Uses(templates.KeyWorkflowHistory) {
		values[templates.KeyWorkflowHistory] = history
	}
	r := rendered(*t, parts, values, true)
	r.CachePrefix = t.StablePrefix(stage1Volatile...)
	if sealed := t.StablePrefix(stage1Step...); sealed > r.CachePrefix && sealed < len(r.Messages) {
		r.CacheSealed = sealed
	}
	return r, nil
}

// Plan renders the action-plan mode's planning prompt (template "plan")
// from the same state as Stage 1 (PlanValues); in.Actions is the offered
// subset.
func (b *Builder) Plan(in Stage1Input) (Rendered, error) {
	return b.render(templates.Plan, in.Template, b.PlanValues(in))
}

// PlanValues is Stage1Values for the action-plan mode's planning and
// re-planning calls: the documents index is whole, as one call plans
// every step of the round with exact references (Stage 1, called every
// step, shows it within a budget).
func (b *Builder) PlanValues(in Stage1Input) map[string]string {
	v := b.Stage1Values(in)
	v[templates.KeyAvailableDocumentsIndex] = placeholders.DocumentsIndex(in.Messages)
	delete(v, templates.KeyWorkflowHistorySealed)
	delete(v, templates.KeyWorkflowHistoryLatest)
	return v
}

// joinBlocks joins the non-empty blocks with a blank line.
func joinBlocks(blocks ...string) string {
	var out []string
	for _, b := range blocks {
		if b != "" {
			out = append(out, b)
		}
	}
	return strings.Join(out, "\n\n")
}

// currentRound is the workflow's round, or the latest round of the
// messages when no workflow is given.
func currentRound(in Stage1Input) int {
	if in.Workflow != nil {
		return in.Workflow.Round
	}
	r := 0
	for _, m := range in.Messages {
		r = max(r, m.Round)
	}
	return r
}
