package prompts

import (
	"github.com/twostep/twostep/templates"
)

// ReplanInput is what the action-plan mode's re-planning prompt is
// rendered from: the state the planning prompt sees (Stage1Input, with the
// offered subset as Actions) and the plan so far.
type ReplanInput struct {
	Stage1Input
	// Progress is the PLAN_PROGRESS value (placeholders.PlanProgressText): the
	// steps run with their outcomes, the failure, the steps not run yet.
	Progress string
}

// Replan renders the re-planning prompt (template "replan"): the planning
// prompt's inputs without VALIDATION_FEEDBACK, plus PLAN_PROGRESS.
func (b *Builder) Replan(in ReplanInput) (Rendered, error) {
	v := b.PlanValues(in.Stage1Input)
	delete(v, templates.KeyValidationFeedback)
	v[templates.KeyPlanProgress] = in.Progress
	return b.render(templates.Replan, in.Template, v)
}
