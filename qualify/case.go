package qualify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Case is one line of a suite (JSON Lines): the state a stage's prompt is
// rendered from, as a dataset line of that stage records it in structured
// form, and what a good reply does with it. A Stage 1 case holds the
// workflow's messages (the user's request, the history and the documents
// they carry), the action catalogue and the user's connections; a Stage 2
// case holds the Stage 1 selection it fills and the catalogue the selected
// action comes from. Nothing else reaches the prompt.
type Case struct {
	ID    string         `json:"id"`
	Stage workflow.Stage `json:"stage"`
	// Situation names what the case tries ("similar actions",
	// "numbers", ...): the report counts cases by it.
	Situation string `json:"situation"`
	// Catalogue names a catalogue of the suite (catalogues.json) whose
	// actions and connections the case starts from; Actions are added to
	// them (replacing one of the same name) and Connections, when set,
	// replace the catalogue's.
	Catalogue   string                `json:"catalogue,omitempty"`
	Actions     []workflow.ActionSpec `json:"actions,omitempty"`
	Connections []workflow.Connection `json:"connections,omitempty"`
	// Messages are the workflow's messages in order (Stage 1): seq,
	// workflow and document owners are filled in when absent.
	Messages []workflow.Message `json:"messages,omitempty"`
	// Selection is the Stage 1 decision a Stage 2 case fills.
	Selection *workflow.Selection `json:"selection,omitempty"`
	Expect    Expect              `json:"expect"`
}

// Expect is what a reply must do for its case to pass (docs/qualify.md,
// "How a case is scored").
type Expect struct {
	// Action is the action Stage 1 must choose.
	Action string `json:"action,omitempty"`
	// Documents are the references Stage 1 must give, as a set: exactly
	// these. Connection is the connection it must name ("" for none).
	Documents  []string `json:"documents,omitempty"`
	Connection string   `json:"connection,omitempty"`
	// Fields must be among the fields Stage 1 asks for; MayAsk may be
	// too; any other field asked fails the case.
	Fields []string `json:"fields,omitempty"`
	MayAsk []string `json:"mayAsk,omitempty"`
	// Carries are facts (a figure, an id, a date) Stage 1 must write into
	// its actionObjective or parametersContext for Stage 2, found there
	// as grounding finds a value (prompts.Ungrounded).
	Carries []string `json:"carries,omitempty"`
	// Values are the parameters Stage 2 must give, compared as
	// grounding normalises (prompts.SameValue); Accepted lists further
	// accepted forms of a value; Absent names parameters that must be
	// left out (nothing in the context fills them).
	Values   map[string]any   `json:"values,omitempty"`
	Accepted map[string][]any `json:"accepted,omitempty"`
	Absent   []string         `json:"absent,omitempty"`
}

// maxCaseLine bounds one line of a cases file.
const maxCaseLine = 1 << 20

// ParseCases reads a suite in JSON Lines: one case a line, blank lines
// and lines starting with "//" skipped. Unknown keys are refused, so a
// misspelt expectation is not silently ignored. Every problem names its
// line.
func ParseCases(r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxCaseLine)
	var out []Case
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || bytes.HasPrefix(text, []byte("//")) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var c Case
		if err := dec.Decode(&c); err != nil {
			return nil, workflow.Errorf(workflow.KindInvalid, "line %d: %v", line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "reading the cases: %v", err)
	}
	return out, nil
}

// Problems reports what makes c unusable, one line each: a missing id,
// an unknown stage, a Stage 1 case without a user request or expected
// action, expected references that do not resolve among its messages or
// an expected connection not listed, a Stage 2 case without a selection
// or expected values or with a value of a field it does not ask for, an
// action not in the case's catalogue.
func (c Case) Problems(cat Catalogue) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if c.ID == "" {
		add("the case has no id")
	}
	switch c.Stage {
	case workflow.StageOne:
		if !slices.ContainsFunc(c.Messages, func(m workflow.Message) bool { return m.Role == workflow.RoleUser && strings.TrimSpace(m.Text) != "" }) {
			add("a Stage 1 case needs a user message with the request")
		}
		if c.Expect.Action == "" {
			add("a Stage 1 case needs expect.action")
		} else if _, ok := cat.Action(c.Expect.Action); !ok {
			add("expect.action %q is not in the catalogue", c.Expect.Action)
		}
		if _, err := workflow.ResolveDocuments(c.messages(), c.Expect.Documents); len(c.Expect.Documents) > 0 && err != nil {
			add("expect.documents: %s", workflow.PublicMessage(err))
		}
		if l := c.Expect.Connection; l != "" && !slices.ContainsFunc(cat.conns, func(x workflow.Connection) bool { return x.Label == l }) {
			add("expect.connection %q is not among the connections", l)
		}
	case workflow.StageTwo:
		if c.Selection == nil {
			add("a Stage 2 case needs the selection it fills")
		} else if _, ok := cat.Action(c.Selection.Action); !ok {
			add("selection.action %q is not in the catalogue", c.Selection.Action)
		}
		if c.Expect.Values == nil {
			add("a Stage 2 case needs expect.values ({} when nothing is to be filled)")
		}
		if c.Selection != nil {
			for _, k := range slices.Sorted(maps.Keys(c.Expect.Values)) {
				if !slices.ContainsFunc(c.Selection.ParametersSchema.Fields, func(f workflow.FieldSpec) bool { return f.Name == k }) {
					add("expect.values.%s is not among the fields the selection asks for", k)
				}
			}
		}
	default:
		add("stage must be stage1 or stage2, not %q", c.Stage)
	}
	return p
}

// workflowID is the workflow every case's messages belong to.
const workflowID = "wf_qualify"

// messages returns c's messages as a store holds them: seq in order, the
// workflow and each document's message filled in, round 1 when unset.
func (c Case) messages() []workflow.Message {
	out := slices.Clone(c.Messages)
	for i := range out {
		m := &out[i]
		m.WorkflowID, m.Seq = workflowID, int64(i+1)
		if m.Round == 0 {
			m.Round = 1
		}
		if m.ID == "" {
			m.ID = fmt.Sprintf("msg_%s_%d", strings.ReplaceAll(c.ID, "-", "_"), i+1)
		}
		m.Documents = slices.Clone(m.Documents)
		for j := range m.Documents {
			d := &m.Documents[j]
			d.WorkflowID, d.MessageID = workflowID, m.ID
		}
	}
	return out
}
