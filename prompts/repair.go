package prompts

import (
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// RepairInput is what the action-plan mode's repair prompt is rendered
// from: the unparseable reply, the methods it may use and why it failed.
type RepairInput struct {
	// Previous is the reply that could not be parsed; it is cut to
	// MaxReplyBytes.
	Previous string
	Actions  []workflow.ActionSpec
	Feedback string
	Template *templates.Template
}

// Repair renders the repair prompt (template "repair").
func (b *Builder) Repair(in RepairInput) (Rendered, error) {
	prev := textclip.Cut(in.Previous, MaxReplyBytes)
	return b.render(templates.Repair, in.Template, map[string]string{
		templates.KeyPreviousResponse:   prev,
		templates.KeyAvailableMethods:   b.placeholders.Methods(in.Actions),
		templates.KeyValidationFeedback: in.Feedback,
	})
}
