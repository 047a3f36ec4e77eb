package prompts

import (
	"testing"

	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// Builder copies a template part's role into the PromptMessage as it is,
// so the templates' role names must be the prompt roles llm maps to
// provider roles.
func TestTemplateRolesArePromptRoles(t *testing.T) {
	t.Parallel()
	for tmpl, prompt := range map[string]string{
		templates.RoleSystem: workflow.PromptSystem, templates.RoleUser: workflow.PromptUser,
		templates.RoleAssistant: workflow.PromptAssistant,
	} {
		if tmpl != prompt {
			t.Errorf("template role %q, prompt role %q: they must be the same", tmpl, prompt)
		}
	}
}
