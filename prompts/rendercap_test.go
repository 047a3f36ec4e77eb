package prompts

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// TestOversizeRenderIsInvalid: a render over templates.MaxRenderedBytes is
// KindInvalid with a message saying so (a 4xx on the admin route, an
// explained round failure on a real call), not an internal error.
func TestOversizeRenderIsInvalid(t *testing.T) {
	t.Parallel()
	tmpl, err := templates.Parse(templates.Stage1, "--- user ---\n"+strings.Repeat("{{KEY:USER_PROMPT}}", 100)+"\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = RenderTemplate(tmpl, map[string]string{"USER_PROMPT": strings.Repeat("x", templates.MaxRenderedBytes/50)})
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(workflow.PublicMessage(err), "too large") {
		t.Errorf("oversize render: kind %q, message %q", workflow.KindOf(err), workflow.PublicMessage(err))
	}
}
