package wiring

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// The offline model acts on directives: a line of the user's prompt such as
//
//	@act tickets.create {"title": "Printer on fire", "priority": "high"}
//	@act crm.lookup {"id": "42"} connection=crm
//	@act mcp.everything.echo {"message": "hello"}
//
// makes React mode's Stage 1 choose that action, asking for the JSON's
// keys as fields (and the connection when one is named), and Stage 2 fill
// them with the JSON's values. So approvals, HTTP actions and MCP tools can
// be tried with no provider.
//
// The model keeps no state and reads no prompt: it takes directives from
// the text of the workflow's user messages only (the request's facts), so
// a line in an action's result, a document or a template is never obeyed.
// It knows a step's directive by a marker, "[@act <hash>]", that Stage 1
// puts in the step's objective: a directive whose marker a message's
// objective carries has run (or was refused, or failed) and the next one
// is chosen; when none is left, the round completes. Stage 2 fills the
// directive whose marker its selection's objective carries. Each distinct
// directive runs once per workflow, in the order of the lines; to run the
// same call again, vary its JSON.

// directive is one @act line.
type directive struct {
	action     string
	params     map[string]any
	connection string
}

// directiveStart finds "@act <action> {" anywhere in a line: method.action,
// or an MCP tool's mcp.<server>.<tool>.
var directiveStart = regexp.MustCompile(`@act\s+([A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)+)\s+\{`)

// connectionSuffix is the optional "connection=<label>" after the JSON.
var connectionSuffix = regexp.MustCompile(`^\s*connection=([A-Za-z0-9._-]{1,64})`)

// directives returns the distinct directives of the user messages among
// msgs, in the order they first appear.
func directives(msgs []workflow.Message) []directive {
	var out []directive
	seen := map[string]bool{}
	for i := range msgs {
		if msgs[i].Role != workflow.RoleUser {
			continue
		}
		for line := range strings.Lines(msgs[i].Text) {
			for _, loc := range directiveStart.FindAllStringSubmatchIndex(line, -1) {
				d, ok := parseDirective(line[loc[2]:loc[3]], line[loc[1]-1:])
				if ok && !seen[d.marker()] {
					seen[d.marker()] = true
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// parseDirective reads the JSON object at the start of rest (and a
// connection after it); ok is false when rest holds no JSON object.
func parseDirective(action, rest string) (directive, bool) {
	dec := json.NewDecoder(strings.NewReader(rest))
	var params map[string]any
	if err := dec.Decode(&params); err != nil || params == nil {
		return directive{}, false
	}
	d := directive{action: action, params: params}
	if m := connectionSuffix.FindStringSubmatch(rest[dec.InputOffset():]); m != nil {
		d.connection = m[1]
	}
	return d, true
}

// marker is the tag the directive's step carries in its objective: a hash
// of the action, its parameters and its connection.
func (d directive) marker() string {
	canon, _ := json.Marshal(d.params) // maps marshal with sorted keys
	sum := sha256.Sum256([]byte(d.action + "\x00" + string(canon) + "\x00" + d.connection))
	return "[@act " + hex.EncodeToString(sum[:4]) + "]"
}

// line is the directive written back as a line Stage 2 finds.
func (d directive) line() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(d.params) // values decoded from JSON encode again
	s := "@act " + d.action + " " + strings.TrimSpace(b.String())
	if d.connection != "" {
		s += " connection=" + d.connection
	}
	return s
}

// pendingDirective returns the first directive of msgs' user messages
// whose marker no message's objective carries yet: one that has not run.
func pendingDirective(msgs []workflow.Message) (directive, bool) {
	for _, d := range directives(msgs) {
		if !slices.ContainsFunc(msgs, func(m workflow.Message) bool {
			return strings.Contains(m.ActionObjective, d.marker())
		}) {
			return d, true
		}
	}
	return directive{}, false
}

// actSelection is Stage 1's reply for d: its action, its keys as the
// fields asked, and the directive itself as the parameters context, where
// Stage 2 finds it.
func actSelection(d directive) string {
	keys := make([]string, 0, len(d.params))
	for k := range d.params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fields := make([]map[string]any, len(keys))
	for i, k := range keys {
		fields[i] = field(k, fieldType(d.params[k]), true, "the value the @act line gives")
	}
	sel := selection(d.action, d.marker()+" "+d.action+" as an @act line asks", nil,
		"The user's @act line gives the values:\n"+d.line(), fields...)
	if d.connection != "" {
		sel["requiredConnection"] = d.connection
	}
	return mustJSON(sel)
}

// fieldType is the Stage 1 field type of a JSON value.
func fieldType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "object"
}

// actParameters fills, from the directive whose marker the Stage 2
// selection's objective carries, the parameters the output schema asks
// for; false when the selection is no directive's.
func actParameters(req workflow.ModelRequest) (map[string]any, bool) {
	sel := req.Facts.Selection
	if sel == nil {
		return nil, false
	}
	for _, d := range directives(req.Facts.Messages) {
		if !strings.Contains(sel.ActionObjective, d.marker()) {
			continue
		}
		asked := askedParams(req.Output).Properties
		params := map[string]any{}
		for k, v := range d.params {
			if _, ok := asked[k]; ok || req.Output == nil {
				params[k] = v
			}
		}
		return params, true
	}
	return nil, false
}
