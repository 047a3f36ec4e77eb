package workflow

import "strconv"

// UserLabel is the documentsLabel of a round's user uploads,
// "round{R}_user_context": the engine labels the user message with it and
// docList references name it (messages.ActionLabel is the action steps').
func UserLabel(round int) string {
	return "round" + strconv.Itoa(round) + "_user_context"
}
