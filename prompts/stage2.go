package prompts

import (
	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates"
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
}

// Stage2Values returns the value of every Stage 2 placeholder:
// ACTION_OBJECTIVE, SELECTED_ACTION, PARAMETERS_CONTEXT, PARAMETERS_SCHEMA
// (see placeholders.StageTwoSchema) and VALIDATION_FEEDBACK.
func (b *Builder) Stage2Values(in Stage2Input) (map[string]string, error) {
	schema, err := placeholders.StageTwoSchema(in.Action, in.Selection.ParametersSchema.Fields)
	if err != nil {
		return nil, err
	}
	return stage2Values(in, schema), nil
}

func stage2Values(in Stage2Input, schema string) map[string]string {
	selected := in.Action.Name
	if in.Action.Description != "" {
		selected += ": " + workflow.Excerpt(in.Action.Description, 500)
	}
	return map[string]string{
		templates.KeyActionObjective:    in.Selection.ActionObjective,
		templates.KeySelectedAction:     selected,
		templates.KeyParametersContext:  in.Selection.ParametersContext,
		templates.KeyParametersSchema:   schema,
		templates.KeyValidationFeedback: in.Feedback,
	}
}

// Stage2 renders the Stage 2 prompt (template "stage2").
func (b *Builder) Stage2(in Stage2Input) (Rendered, error) {
	values, err := b.Stage2Values(in)
	if err != nil {
		return Rendered{}, err
	}
	return b.render(templates.Stage2, in.Template, values)
}

// Stage2Call renders the Stage 2 prompt and builds its native output
// schema (NewStage2Output) from one cut of the action's schema: the
// fields the prompt shows are exactly the ones the schema admits.
func (b *Builder) Stage2Call(in Stage2Input) (Rendered, Stage2Output, error) {
	text, names, err := placeholders.StageTwoSchemaFields(in.Action, in.Selection.ParametersSchema.Fields)
	if err != nil {
		return Rendered{}, Stage2Output{}, err
	}
	out, err := b.stage2Output(in.Action, text, names)
	if err != nil {
		return Rendered{}, Stage2Output{}, err
	}
	r, err := b.render(templates.Stage2, in.Template, stage2Values(in, text))
	return r, out, err
}
