// Package messages is the message creator: it builds the action and
// assistant messages a workflow records (the engine makes user messages,
// labelled workflow.UserLabel), with their documentsLabel,
// deterministic summary, findings and learnings, and gives every message
// and document its id.
//
// Every function is pure apart from id generation (workflow.NewID) and the
// clock when a caller leaves Now zero: the same observation always gives
// the same summary, so histories and tests are reproducible.
package messages

import (
	"strconv"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// ActionLabel returns the documentsLabel of an action step's outputs:
// "round{R}_step{S}_{method}_{action}" (e.g. "round1_step2_ai_process" for
// "ai.process"). Characters outside letters, digits, "_" and "-" become
// "_", so the label is always a valid docList reference label.
func ActionLabel(round, step int, action string) string {
	method, name, _ := strings.Cut(action, ".")
	return "round" + strconv.Itoa(round) + "_step" + strconv.Itoa(step) + "_" +
		labelPart(method) + "_" + labelPart(name)
}

// labelPart maps s to letters, digits, "_" and "-".
func labelPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// documentName makes a file name safe to show in an index line and to copy
// into a reference: control characters become "_", surrounding space is
// trimmed, and an empty name becomes "document".
func documentName(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, s))
	if s == "" {
		return "document"
	}
	return s
}

// attach gives docs ids and binds them to message m (WorkflowID and
// MessageID), filling Size from the content and a default MIME type. It
// returns the contents to commit; m.Documents gets their metadata.
func attach(m *workflow.Message, docs []workflow.DocumentContent) []workflow.DocumentContent {
	if len(docs) == 0 {
		m.Documents = []workflow.Document{}
		return nil
	}
	out := make([]workflow.DocumentContent, len(docs))
	m.Documents = make([]workflow.Document, len(docs))
	for i, d := range docs {
		d.ID = workflow.NewID(workflow.PrefixDocument)
		d.WorkflowID = m.WorkflowID
		d.MessageID = m.ID
		d.Name = documentName(d.Name)
		d.Size = int64(len(d.Content))
		if d.MimeType == "" {
			d.MimeType = "application/octet-stream"
		}
		out[i] = d
		m.Documents[i] = d.Document
	}
	return out
}
