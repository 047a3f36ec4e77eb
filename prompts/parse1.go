package prompts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Stage1Env is what a Stage 1 reply is validated against: the registered
// actions, the workflow's messages (for document references) and the
// connections the workflow's user owns.
type Stage1Env struct {
	Registry    workflow.Registry
	Messages    []workflow.Message
	Connections []workflow.Connection
}

// Stage1Result is the outcome of parsing a Stage 1 reply. Problems empty
// means accepted and Selection is valid; otherwise each problem is one line
// naming what was wrong, ready for Feedback. Parsed is the extracted,
// repaired JSON (nil when none was found), for the trace.
type Stage1Result struct {
	Selection workflow.Selection
	Parsed    json.RawMessage
	Problems  []string
}

// ParseStage1 parses and validates a Stage 1 reply against every rejection
// rule of DESIGN §3: a top-level "parameters" key; an action that is not a
// string naming a registered action; a forbidden field name or a field type
// outside string|number|boolean|enum|object in parametersSchema.fields (a
// field named without a type takes the chosen action's registered one, and
// is a problem when the action does not register it); a
// document reference that does not resolve in this workflow; a connection
// the user does not own, or none when the action requires one. "learnings"
// may be a single string; "requiredConnection" may be null or "". Other
// keys are ignored (they stay in Parsed). It never panics and does bounded
// work: the reply is capped at MaxReplyBytes first.
func ParseStage1(reply string, env Stage1Env) Stage1Result {
	raw, err := ExtractObject(reply)
	if err != nil {
		return Stage1Result{Problems: []string{workflow.PublicMessage(err)}}
	}
	res := Stage1Result{Parsed: raw}
	var members [12]rawMember
	obj, err := decodeObject(raw, members[:])
	if err != nil {
		res.Problems = []string{err.Error()}
		return res
	}
	p := &problems{}
	var paramKeys []string
	for _, m := range obj {
		// Any case: a decoder downstream would take "Parameters" for it.
		if strings.EqualFold(m.key, "parameters") && !slices.Contains(paramKeys, m.key) {
			paramKeys = append(paramKeys, m.key)
		}
	}
	slices.Sort(paramKeys)
	for _, k := range paramKeys {
		p.add(`the reply has a %q key: Stage 1 must not fill parameter values; describe them in "parametersContext" and "parametersSchema" instead`, textclip.ClipRunes(k, maxQuoted))
	}
	sel := &res.Selection
	spec, known := parseAction(obj, env.Registry, sel, p)
	sel.ActionObjective = textMember(obj, "actionObjective", p)
	sel.ParametersContext = contextMember(obj)
	sel.Learnings = stringList(obj, "learnings", p)
	sel.RequiredInputDocuments = stringList(obj, "requiredInputDocuments", p)
	schema, _ := obj.get("parametersSchema")
	types := newFieldTypes(spec, known)
	sel.ParametersSchema.Fields = parseFields(schema, types, p)
	resolveNamedFields(sel.ParametersSchema.Fields, types, p)
	sel.RequiredConnection = connectionMember(obj, p)
	checkInputs(sel, env, spec, known, p)
	res.Problems = p.lines
	return res
}

// maxQuoted bounds, in runes, model text quoted inside a problem line;
// workflow.MaxProblemLine bounds a whole line that quotes model text.
const maxQuoted = 80

// MaxProblems bounds the problem lines of one parsed reply. A reply that
// is crammed with bad entries (thousands of references or fields) gets its
// first MaxProblems lines and one line counting the rest, so the feedback
// persisted in the checkpoint and sent back in the retry prompt stays small
// whatever the reply holds.
const MaxProblems = 20

// problems collects problem lines in the order they are found: at most
// MaxProblems, then one last line counting the lines left out.
type problems struct {
	lines []string
	more  int
}

func (p *problems) add(format string, args ...any) {
	if len(p.lines) < MaxProblems {
		p.lines = append(p.lines, fmt.Sprintf(format, args...))
		return
	}
	p.more++
	summary := notices.MoreProblems(p.more)
	if p.more == 1 {
		p.lines = append(p.lines, summary)
	} else {
		p.lines[MaxProblems] = summary
	}
}

// parseAction checks "action" and returns the registered spec.
func parseAction(obj rawObject, reg workflow.Registry, sel *workflow.Selection, p *problems) (workflow.ActionSpec, bool) {
	raw, ok := obj.get("action")
	if !ok {
		p.add(`"action" is missing: name one registered action, e.g. %q`, workflow.CompleteAction)
		return workflow.ActionSpec{}, false
	}
	var name string
	if !unmarshalString(raw, &name) {
		p.add(`"action" must be a string naming a registered action, got %s`, JSONKind(raw))
		return workflow.ActionSpec{}, false
	}
	sel.Action = name
	if reg == nil {
		p.add(`action %q is not a registered action`, textclip.ClipRunes(name, maxQuoted))
		return workflow.ActionSpec{}, false
	}
	spec, ok := reg.Action(name)
	if !ok {
		p.add(`action %q is not a registered action; choose one of: %s`, textclip.ClipRunes(name, maxQuoted), actionNames(reg))
		return workflow.ActionSpec{}, false
	}
	return spec, true
}

// actionNames lists up to 40 registered action names.
func actionNames(reg workflow.Registry) string {
	specs := reg.Actions()
	names := make([]string, 0, min(len(specs), 40))
	for _, s := range specs[:min(len(specs), 40)] {
		names = append(names, s.Name)
	}
	if len(specs) > 40 {
		names = append(names, "…")
	}
	return strings.Join(names, ", ")
}

// textMember returns a string member ("" when absent or null).
func textMember(obj rawObject, key string, p *problems) string {
	raw, ok := obj.get(key)
	if !ok || isNull(raw) {
		return ""
	}
	var s string
	if !unmarshalString(raw, &s) {
		p.add(`%q must be a string, got %s`, key, JSONKind(raw))
	}
	return s
}

// contextMember returns "parametersContext": a string as is, any other
// JSON value as its compact text (the model sometimes writes an object).
func contextMember(obj rawObject) string {
	raw, ok := obj.get("parametersContext")
	if !ok || isNull(raw) {
		return ""
	}
	var s string
	if unmarshalString(raw, &s) {
		return s
	}
	return string(raw)
}

// stringList returns a list-of-strings member; a single string is accepted
// as a one-element list, null or absent as none.
func stringList(obj rawObject, key string, p *problems) []string {
	raw, ok := obj.get(key)
	if !ok || isNull(raw) {
		return nil
	}
	var one string
	if unmarshalString(raw, &one) {
		if strings.TrimSpace(one) == "" {
			return nil
		}
		return []string{one}
	}
	list, ok := unmarshalStrings(raw)
	if !ok {
		p.add(`%q must be a list of strings, got %s`, key, JSONKind(raw))
		return nil
	}
	return list
}

// unmarshalStrings is json.Unmarshal(raw, &list) for a valid JSON value
// raw, the list and whether it succeeded: an array's elements are read in
// place (null as ""), anything else goes to json.Unmarshal.
func unmarshalStrings(raw json.RawMessage) ([]string, bool) {
	var stack [8]json.RawMessage
	if items, ok := splitArray(raw, stack[:]); ok {
		list := make([]string, len(items))
		for i, it := range items {
			if !isNull(it) && !unmarshalString(it, &list[i]) {
				return nil, false
			}
		}
		return list, true
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	return list, true
}

// connectionMember returns "requiredConnection" ("" for null or absent).
func connectionMember(obj rawObject, p *problems) string {
	return strings.TrimSpace(textMember(obj, "requiredConnection", p))
}
