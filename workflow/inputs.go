package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twostep/twostep/textclip"
)

// InputFields names where a step's inputs were written, so that a problem
// line tells its reader (the model, mostly) which field to fix.
type InputFields struct {
	// Documents is the field holding the document references, e.g.
	// requiredInputDocuments; problems name its entries Documents[i].
	Documents string
	// Connection is the field holding the connection label.
	Connection string
}

// StepInputs is what one step reads besides its business parameters, with
// what it is checked against.
type StepInputs struct {
	// Action is the step's action; Known is false when the action is not
	// registered, and then only the references themselves are checked.
	Action ActionSpec
	Known  bool
	// Parameters are the step's parameters (nil when not chosen yet):
	// none of their keys may be a forbidden field.
	Parameters map[string]any
	// Documents are the document references; Connection the connection
	// label ("" for none).
	Documents  []string
	Connection string
	// Messages are the workflow's messages the references resolve in;
	// Connections are the connections the workflow's user owns.
	Messages    []Message
	Connections []Connection
	// Later are labels that a "docList:<label>" reference may name
	// although no message has them yet: the resultLabels of earlier steps
	// of a plan, resolved when the step runs.
	Later map[string]bool
	// Fields names the fields in problem lines.
	Fields InputFields
}

// CheckStepInputs applies every rule on a step's inputs and returns one
// problem line per broken rule (none when the step may run): a forbidden
// parameter key (IsForbiddenField), a document reference that does not
// resolve in the workflow, no documents for an action that requires them,
// no connection for an action that requires one, a connection the user does
// not own, or one of another kind than the action uses. Stage 1 sends the
// lines back as feedback, the plan validator records them as a dropped
// step's reason, and execution as the failed step's reason.
func CheckStepInputs(in StepInputs) []string {
	lines := ForbiddenKeyProblems(in.Parameters)
	for i, s := range in.Documents {
		ref, err := ParseReference(s)
		if err == nil && ref.Kind == RefDocList && ref.MessageID == "" && in.Later[ref.Label] {
			continue
		}
		if err == nil {
			_, err = ResolveReference(in.Messages, ref)
		}
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s[%d]: %s; copy a reference exactly from the documents index",
				in.Fields.Documents, i, PublicMessage(err)))
		}
	}
	if in.Known {
		if line := DocumentsProblem(in.Action, len(in.Documents), in.Fields.Documents); line != "" {
			lines = append(lines, line)
		}
	}
	if line := ConnectionProblem(in.Action, in.Known, in.Connection, in.Connections, in.Fields.Connection); line != "" {
		lines = append(lines, line)
	}
	return lines
}

// DocumentsProblem returns the problem with giving the action (spec) n
// input documents, or "": none when it requires some. field names where
// the documents are listed.
func DocumentsProblem(spec ActionSpec, n int, field string) string {
	if spec.Documents == DocumentsRequired && n == 0 {
		return fmt.Sprintf("action %q needs input documents: list them in %q", spec.Name, field)
	}
	return ""
}

// ConnectionProblem returns the problem with the connection label for the
// action (spec, when known), among conns, the connections the user owns,
// or "": none given when the action requires one, not owned, or of another
// kind than the action uses. field names where the label was written.
func ConnectionProblem(spec ActionSpec, known bool, label string, conns []Connection, field string) string {
	if label == "" {
		if known && spec.ConnectionRequired {
			return fmt.Sprintf("action %q needs a connection of kind %q: set %q to one of: %s",
				spec.Name, spec.ConnectionKind, field, labelsOfKind(conns, spec.ConnectionKind))
		}
		return ""
	}
	c, err := ResolveConnection(conns, label)
	if err != nil {
		return field + ": " + textclip.Clip(PublicMessage(err), MaxProblemLine)
	}
	if known && spec.ConnectionKind != "" && c.Kind != spec.ConnectionKind {
		return fmt.Sprintf("connection %q is of kind %q, but action %q uses kind %q: set %q to one of: %s",
			c.Label, c.Kind, spec.Name, spec.ConnectionKind, field, labelsOfKind(conns, spec.ConnectionKind))
	}
	return ""
}

// ForbiddenKeyProblems returns one problem line per forbidden key of
// params (IsForbiddenField), in key order.
func ForbiddenKeyProblems(params map[string]any) []string {
	// Nearly always none: sort the keys only when there is one.
	if !hasForbiddenKey(params) {
		return nil
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if IsForbiddenField(k) {
			lines = append(lines, fmt.Sprintf("parameters.%s: forbidden key: documents, connections and history are attached by the engine, never passed as parameters", k))
		}
	}
	return lines
}

func hasForbiddenKey(params map[string]any) bool {
	for k := range params {
		if IsForbiddenField(k) {
			return true
		}
	}
	return false
}

// MaxProblemLine bounds, in bytes, a problem line that quotes model text
// (Clip): the lines CheckStepInputs returns, those Stage 1 and Stage 2
// feed back to the model, and an action plan's dropped steps' reasons.
const MaxProblemLine = 400

// labelsOfKind lists the labels of conns of the given kind ("" for any).
func labelsOfKind(conns []Connection, kind string) string {
	var labels []string
	for _, c := range conns {
		if kind == "" || c.Kind == kind {
			labels = append(labels, c.Label)
		}
	}
	if len(labels) == 0 {
		return "(you have no such connection)"
	}
	return strings.Join(labels, ", ")
}
