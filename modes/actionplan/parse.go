package actionplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// The legacy reference fields of a plan step's parameters (DESIGN §5): they
// are taken out of the parameters before validation and resolved by the
// engine, never passed to the action.
const (
	fieldDocumentList        = "documentList"
	fieldConnectionReference = "connectionReference"
)

// Draft is one plan step as the model wrote it: decoded, with the legacy
// reference fields taken out of Parameters, but not yet validated. Problem
// is set when the element itself is malformed (not an object, no action
// name, a reference field of the wrong type); such a draft is dropped by
// validation with that reason while the rest of the plan is kept.
type Draft struct {
	Action      string
	Parameters  map[string]any
	ResultLabel string
	Documents   []string
	Connection  string
	Problem     string
}

// ParsePlan parses a planning reply into drafts. It is tolerant of how the
// model wraps the plan: a bare JSON array, {"actions": [...]} or {"steps":
// [...]} (or a single step object), each step in this engine's shape or
// SAGE's (see fromSAGE), inside a Markdown code fence or surrounded by prose, or
// slightly malformed JSON — the extraction and repair are those of
// prompts.ExtractJSON, so replies are capped at prompts.MaxReplyBytes before
// any work. An error (kind KindInvalid) means the reply holds no plan at
// all: that is what earns the repair call. ParsePlan never panics and its
// cost is bounded by the reply cap.
func ParsePlan(reply string) ([]Draft, error) {
	raw, err := prompts.ExtractJSON(reply)
	if err != nil {
		return nil, err
	}
	items, err := planItems(raw)
	if err != nil {
		return nil, err
	}
	drafts := make([]Draft, len(items))
	for i, item := range items {
		drafts[i] = decodeDraft(item)
	}
	return drafts, nil
}

// planItems returns the step elements of a plan: the array itself, the
// "actions" array of an object, or a one-step plan for an object that
// has an "action" key.
func planItems(raw json.RawMessage) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) == nil {
		return items, stepObjects(items)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply must be a JSON array of steps, got %s", prompts.JSONKind(raw))
	}
	for _, key := range []string{"actions", "steps"} {
		if list, ok := obj[key]; ok {
			if json.Unmarshal(list, &items) != nil {
				return nil, workflow.Errorf(workflow.KindInvalid, `%q must be an array of steps, got %s`, key, prompts.JSONKind(list))
			}
			return items, stepObjects(items)
		}
	}
	_, action := obj["action"]
	_, typed := obj["type"]
	if action || typed {
		return []json.RawMessage{raw}, nil
	}
	return nil, workflow.Errorf(workflow.KindInvalid, `the reply must be a JSON array of steps (or {"actions": [...]}), got an object without "actions"`)
}

// stepObjects rejects a non-empty array without a single object in it (a
// bracketed aside in prose, such as "[1]"), so such a reply earns the repair
// call instead of passing for a plan whose steps are all malformed.
func stepObjects(items []json.RawMessage) error {
	for _, it := range items {
		if prompts.JSONKind(it) == "an object" {
			return nil
		}
	}
	if len(items) == 0 {
		return nil
	}
	return workflow.Errorf(workflow.KindInvalid, "the reply's array holds no step objects: each step must be {\"action\": ..., \"parameters\": {...}}")
}

// decodeDraft decodes one step element; a malformed element becomes a draft
// whose Problem says what is wrong.
func decodeDraft(item json.RawMessage) Draft {
	var obj map[string]json.RawMessage
	if json.Unmarshal(item, &obj) != nil || obj == nil {
		return Draft{Problem: "the step must be an object, got " + prompts.JSONKind(item)}
	}
	if _, ok := obj["type"]; ok {
		var problem string
		if obj, problem = fromSAGE(obj); problem != "" {
			return Draft{Problem: problem}
		}
	}
	var d Draft
	if json.Unmarshal(obj["action"], &d.Action) != nil || d.Action == "" {
		return Draft{Problem: `"action" must be a non-empty string naming a method`}
	}
	if raw, ok := obj["resultLabel"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &d.ResultLabel) != nil {
			d.Problem = `"resultLabel" must be a string`
			return d
		}
	}
	d.Parameters = map[string]any{}
	if raw, ok := obj["parameters"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &d.Parameters) != nil || d.Parameters == nil {
			d.Parameters = map[string]any{}
			d.Problem = `"parameters" must be an object, got ` + prompts.JSONKind(raw)
			return d
		}
	}
	if err := takeReferences(&d); err != nil {
		d.Problem = err.Error()
	}
	return d
}

// fromSAGE rewrites a step in SAGE's shape as this engine's: {"type":
// "tool", "name": n, "arguments": a} becomes {"action": n, "parameters":
// a} (arguments may also be a JSON object encoded as a string, as in an
// OpenAI tool call), and {"type": "reply", "text": text} (SAGE's field;
// "content" or "message" are read when "text" is absent) becomes
// workflow.complete with message text, the round's closing answer.
// A step with "action" keeps it; another "type" is a problem.
func fromSAGE(obj map[string]json.RawMessage) (map[string]json.RawMessage, string) {
	var typ string
	if json.Unmarshal(obj["type"], &typ) != nil {
		return nil, `"type" must be "tool" or "reply"`
	}
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "tool":
		out := maps.Clone(obj)
		if _, ok := out["action"]; !ok {
			out["action"] = obj["name"]
		}
		if args, ok := obj["arguments"]; ok {
			if _, has := out["parameters"]; !has {
				var encoded string
				if json.Unmarshal(args, &encoded) == nil {
					args = json.RawMessage(encoded)
				}
				out["parameters"] = args
			}
		}
		return out, ""
	case "reply":
		var text json.RawMessage
		for _, key := range []string{"text", "content", "message"} { // SAGE writes "text"
			if raw, ok := obj[key]; ok {
				text = raw
				break
			}
		}
		var s string
		if json.Unmarshal(text, &s) != nil {
			return nil, `a reply step needs "text" (or "content", "message"): the answer as a string`
		}
		params, _ := json.Marshal(map[string]string{"message": s})
		action, _ := json.Marshal(workflow.CompleteAction)
		return map[string]json.RawMessage{"action": action, "parameters": params}, ""
	}
	if _, ok := obj["action"]; ok {
		return obj, ""
	}
	return nil, fmt.Sprintf(`"type" must be "tool" or "reply", got %q`, typ)
}

// takeReferences moves parameters.documentList (a list of references, or
// one reference) and parameters.connectionReference (a label) out of the
// parameters into Documents and Connection.
func takeReferences(d *Draft) error {
	if v, ok := d.Parameters[fieldDocumentList]; ok {
		delete(d.Parameters, fieldDocumentList)
		switch list := v.(type) {
		case nil:
		case string:
			if list != "" {
				d.Documents = []string{list}
			}
		case []any:
			for i, x := range list {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("parameters.documentList[%d] must be a reference string", i)
				}
				d.Documents = append(d.Documents, s)
			}
		default:
			return fmt.Errorf("parameters.documentList must be a list of document references")
		}
	}
	if v, ok := d.Parameters[fieldConnectionReference]; ok {
		delete(d.Parameters, fieldConnectionReference)
		switch label := v.(type) {
		case nil:
		case string:
			d.Connection = label
		default:
			return fmt.Errorf("parameters.connectionReference must be a connection label")
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
