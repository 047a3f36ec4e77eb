package prompts

import (
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Stage2Input is everything Stage 2 is rendered from — deliberately only
// the Stage 1 selection and the selected action's spec, so no user prompt,
// history, document or connection can reach the prompt.
type Stage2Input struct {
	Selection workflow.Selection
	Action    workflow.ActionSpec
	// Feedback is the VALIDATION_FEEDBACK of a retry; "" on a first attempt.
	Feedback string
	// Template, when set, is rendered instead of the set's "stage2".
	Template *templates.Template
	// Output is the kind of reply the call asks for: with NativeOutput the
	// template's reply shape and parameter schema are left out, as the
	// provider is given them.
	Output templates.Output
}

// Stage2Values returns the value of every Stage 2 placeholder:
// ACTION_OBJECTIVE, SELECTED_ACTION, PARAMETERS_CONTEXT, PARAMETERS_SCHEMA
// (see placeholders.StageTwoSchema) and VALIDATION_FEEDBACK.
func (b *Builder) Stage2Values(in Stage2Input) (map[string]string, error) {
	schema, err := b.placeholders.StageTwoSchema(in.Action, in.Selection.ParametersSchema.Fields)
	if err != nil {
		return nil, err
	}
	return stage2Values(in, schema), nil
}

func stage2Values(in Stage2Input, schema string) map[string]string {
	selected := in.Action.Name
	if in.Action.Description != "" {
		selected += ": " + textclip.Excerpt(in.Action.Description, 500)
	}
	return map[string]string{
		templates.KeyActionObjective:    in.Selection.ActionObjective,
		templates.KeySelectedAction:     selected,
		templates.KeyParametersContext:  in.Selection.ParametersContext,
		templates.KeyParametersSchema:   schema,
		templates.KeyValidationFeedback: in.Feedback,
	}
}

// Stage2 renders the Stage 2 prompt (template "stage2") for in.Output.
// CachePrefix counts the messages before the first with a placeholder (the
// rules), the same for every Stage 2 call.
func (b *Builder) Stage2(in Stage2Input) (Rendered, error) {
	values, err := b.Stage2Values(in)
	if err != nil {
		return Rendered{}, err
	}
	return b.renderStage2(in, values)
}

// renderStage2 renders Stage 2 with values for in.Output.
func (b *Builder) renderStage2(in Stage2Input, values map[string]string) (Rendered, error) {
	t, err := b.template(templates.Stage2, in.Template)
	if err != nil {
		return b.Render(templates.Stage2, values) // the same error
	}
	r, err := renderFor(in.Output, t, values, true)
	r.CachePrefix = t.StablePrefix(t.Keys()...)
	return r, err
}

// Stage2Output returns the native output schema of in's Stage 2 call
// (NewStage2Output, from the builder's cache), which a caller needs before
// it renders the prompt: the call's planned output mode depends on it.
func (b *Builder) Stage2Output(in Stage2Input) (Stage2Output, error) {
	text, names, err := b.placeholders.StageTwoSchemaFields(in.Action, in.Selection.ParametersSchema.Fields)
	if err != nil {
		return Stage2Output{}, err
	}
	return b.stage2Output(in.Action, text, names)
}
