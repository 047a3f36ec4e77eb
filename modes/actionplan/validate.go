package actionplan

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// MaxPlanSteps bounds how many steps of a plan are looked at: steps beyond
// it are ignored without validation (a round never runs more than
// engine.DefaultMaxStepsLimit steps), so a reply full of tiny steps
// cannot make validation or the trace large.
const MaxPlanSteps = 200

// maxLabel is the longest documentsLabel a reference can name (see
// workflow.ParseReference).
const maxLabel = 200

// Env is what plan steps are validated against: the registry, the
// workflow's messages (for document references), the connections the user
// owns, and how many steps the plan may keep.
type Env struct {
	Registry    workflow.Registry
	Messages    []workflow.Message
	Connections []workflow.Connection
	// MaxSteps is how many steps the round has left; the valid steps are
	// truncated to it. 0 or less keeps none.
	MaxSteps int
	// Offered, when not nil, are the methods the prompt offered (the top-K
	// subset): a step naming any other action is dropped, even a
	// registered one. workflow.complete is always accepted.
	Offered []workflow.ActionSpec
}

// Dropped is a plan step that validation removed, and why.
type Dropped struct {
	// Index is the step's 0-based position in the model's plan.
	Index  int    `json:"index"`
	Action string `json:"action,omitempty"`
	Reason string `json:"reason"`
}

// Validated is a validated plan, as recorded in the planning call's trace.
type Validated struct {
	// Steps are the valid steps, in the model's order, at most Env.MaxSteps.
	Steps []workflow.PlanStep `json:"steps"`
	// Dropped are the invalid steps with their reasons.
	Dropped []Dropped `json:"dropped,omitempty"`
	// Truncated counts valid steps cut off beyond Env.MaxSteps.
	Truncated int `json:"truncated,omitempty"`
	// Ignored counts steps beyond MaxPlanSteps, never validated.
	Ignored int `json:"ignored,omitempty"`
}

// Validate checks every draft and keeps the valid ones. A step is valid
// when it is well-formed, names a registered action among env.Offered (when
// set; workflow.complete
// with a non-empty "message" is always accepted), carries no forbidden
// parameter (workflow.ForbiddenFields, once the legacy reference fields are
// taken out), has schema-valid parameters (Registry.ValidateParameters),
// its document references resolve inside the workflow — or name, as
// "docList:<label>", the resultLabel of an earlier valid step, resolved
// when the step runs — and its connection is one the user owns (and is
// given when the action requires one). Steps after workflow.complete are
// dropped: it ends the round. The valid steps are then truncated to
// env.MaxSteps; steps beyond MaxPlanSteps are ignored. Validate never runs
// an action and never calls the model.
func Validate(drafts []Draft, env Env) Validated {
	v := validator{env: env, labels: map[string]bool{}}
	out := Validated{Steps: []workflow.PlanStep{}}
	if len(drafts) > MaxPlanSteps {
		out.Ignored = len(drafts) - MaxPlanSteps
		drafts = drafts[:MaxPlanSteps]
	}
	completed := false
	for i, d := range drafts {
		var reason string
		step := workflow.PlanStep{}
		if completed {
			reason = "comes after " + workflow.CompleteAction + ", which ends the round"
		} else {
			step, reason = v.step(d)
		}
		if reason != "" {
			out.Dropped = append(out.Dropped, Dropped{Index: i, Action: textclip.Clip(textclip.OneLine(d.Action), 100), Reason: textclip.Clip(textclip.OneLine(reason), workflow.MaxProblemLine)})
			continue
		}
		completed = step.Action == workflow.CompleteAction
		if step.ResultLabel != "" {
			v.labels[step.ResultLabel] = true
		}
		out.Steps = append(out.Steps, step)
	}
	limit := max(env.MaxSteps, 0)
	if len(out.Steps) > limit {
		out.Truncated = len(out.Steps) - limit
		out.Steps = out.Steps[:limit]
	}
	return out
}

// validator checks one step at a time; labels holds the resultLabels of
// the valid steps before it.
type validator struct {
	env    Env
	labels map[string]bool
}

// step validates d and returns it as a plan step, or the reason it is
// invalid.
func (v *validator) step(d Draft) (workflow.PlanStep, string) {
	if d.Problem != "" {
		return workflow.PlanStep{}, d.Problem
	}
	step := workflow.PlanStep{
		Action: d.Action, Parameters: d.Parameters, ResultLabel: cleanLabel(d.ResultLabel),
		Documents: d.Documents, Connection: d.Connection,
	}
	spec, registered := v.env.Registry.Action(d.Action)
	if !registered && d.Action != workflow.CompleteAction {
		return step, fmt.Sprintf("action %q is not registered", d.Action)
	}
	if d.Action != workflow.CompleteAction && v.env.Offered != nil && !offered(v.env.Offered, d.Action) {
		return step, fmt.Sprintf("action %q is not among the available methods offered for this request", d.Action)
	}
	// Forbidden keys first, then the schema, then documents and connection.
	problems := workflow.ForbiddenKeyProblems(d.Parameters)
	if registered {
		problems = append(problems, v.env.Registry.ValidateParameters(d.Action, d.Parameters)...)
	}
	if d.Action == workflow.CompleteAction {
		if msg, _ := d.Parameters["message"].(string); strings.TrimSpace(msg) == "" {
			problems = append(problems, `parameters.message: the final answer must be a non-empty string`)
		}
		return step, strings.Join(problems, "; ")
	}
	problems = append(problems, workflow.CheckStepInputs(workflow.StepInputs{
		Action: spec, Known: true, Documents: d.Documents, Connection: d.Connection,
		Messages: v.env.Messages, Connections: v.env.Connections, Later: v.labels, Fields: planFields,
	})...)
	return step, strings.Join(problems, "; ")
}

// planFields are where a plan step's inputs are written.
var planFields = workflow.InputFields{Documents: "parameters.documentList", Connection: "parameters.connectionReference"}

// offered reports whether name is one of the offered actions.
func offered(specs []workflow.ActionSpec, name string) bool {
	return slices.ContainsFunc(specs, func(s workflow.ActionSpec) bool { return s.Name == name })
}

// cleanLabel makes a resultLabel usable as a documentsLabel that a
// "docList:<label>" reference can name: whitespace, control characters and
// colons become "_", and it is cut to maxLabel bytes.
func cleanLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || r == ':' || r == utf8.RuneError {
			return '_'
		}
		return r
	}, strings.TrimSpace(s))
	return textclip.Cut(s, maxLabel)
}
