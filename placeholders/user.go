package placeholders

import (
	"github.com/twostep/twostep/workflow"
)

// UserPromptText returns the USER_PROMPT value: the text of the latest user
// message of round (the round's prompt), or of the latest user message at
// all when round has none.
func UserPromptText(msgs []workflow.Message, round int) string {
	last := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i] // not a copy of every message
		if m.Role != workflow.RoleUser {
			continue
		}
		if m.Round == round {
			return m.Text
		}
		if last == "" {
			last = m.Text
		}
	}
	return last
}
