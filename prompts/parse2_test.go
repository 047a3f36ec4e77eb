package prompts

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

func TestParseStage2(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	askAll := askedFields("instruction", "language", "maxWords")
	tests := []struct {
		name   string
		reply  string
		params map[string]any
		want   []string
	}{
		{name: "bare", reply: `{"schema": "parameters_v1", "parameters": {"instruction": "Summarise", "maxWords": 100}}`,
			params: map[string]any{"instruction": "Summarise", "maxWords": float64(100)}},
		{name: "fenced with trailing comma", reply: "```json\n{\"schema\": \"parameters_v1\", \"parameters\": {\"instruction\": \"Summarise\", \"language\": \"de\",},}\n```",
			params: map[string]any{"instruction": "Summarise", "language": "de"}},
		{name: "prose around", reply: "Here you go: {\"schema\": \"parameters_v1\", \"parameters\": {\"instruction\": \"x\"}} hope it helps",
			params: map[string]any{"instruction": "x"}},
		{name: "schema errors as path: message", reply: `{"schema": "parameters_v1", "parameters": {"maxWords": "many", "tone": "dry"}}`,
			params: map[string]any{"maxWords": "many", "tone": "dry"},
			want:   []string{"parameters.tone: not a field to fill", "/instruction: missing required property", "/maxWords: got string, want number", "/tone: additional property not allowed"}},
		{name: "different schema", reply: `{"schema": "parameters_v2", "parameters": {"instruction": "x"}}`,
			params: map[string]any{"instruction": "x"}, want: []string{`"schema" must be "parameters_v1", got "parameters_v2"`}},
		{name: "schema missing", reply: `{"parameters": {"instruction": "x"}}`,
			params: map[string]any{"instruction": "x"}, want: []string{`"schema" is missing`}},
		{name: "forbidden keys", reply: `{"schema": "parameters_v1", "parameters": {"instruction": "x", "documentList": ["docList:a"], "connectionReference": "crm"}}`,
			params: map[string]any{"instruction": "x", "documentList": []any{"docList:a"}, "connectionReference": "crm"},
			want: []string{"parameters.connectionReference: forbidden key", "parameters.documentList: forbidden key",
				"/connectionReference: additional property not allowed", "/documentList: additional property not allowed"}},
		{name: "parameters missing", reply: `{"schema": "parameters_v1"}`, want: []string{`"parameters" is missing`}},
		{name: "parameters not an object", reply: `{"schema": "parameters_v1", "parameters": ["x"]}`, want: []string{`"parameters" must be an object, got an array`}},
		{name: "not JSON", reply: "no idea", want: []string{"the reply contains no JSON value"}},
		{name: "too large", reply: strings.Repeat("{", MaxReplyBytes+1), want: []string{"more than the limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := ParseStage2(tt.reply, spec, askAll, reg)
			if diff := cmp.Diff(tt.params, res.Parameters); diff != "" {
				t.Errorf("Parameters (-want +got):\n%s", diff)
			}
			if len(res.Problems) != len(tt.want) {
				t.Fatalf("got problems %q, want %q", res.Problems, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(res.Problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, res.Problems[i], w)
				}
			}
		})
	}
}

// TestStage2SeesNothingElse plants a unique marker in every piece of
// workflow state Stage 2 must not see and checks none reaches its prompt.
func TestStage2SeesNothingElse(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	markers := map[string]string{
		"user prompt":       "MARK-USER-PROMPT",
		"document name":     "MARK-DOC-NAME.pdf",
		"document content":  "MARK-DOC-CONTENT",
		"document label":    "mark_doc_label",
		"reference":         "docItem:doc_mark",
		"history summary":   "MARK-HISTORY-SUMMARY",
		"history findings":  "MARK-HISTORY-FINDINGS",
		"learnings":         "MARK-LEARNING",
		"connection label":  "mark-connection",
		"connection detail": "MARK-CONNECTION-DESCRIPTION",
	}
	msgs := []workflow.Message{
		{ID: "msg_u", WorkflowID: "wf_a", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: markers["user prompt"],
			DocumentsLabel: markers["document label"], Documents: []workflow.Document{{ID: "doc_mark", WorkflowID: "wf_a", MessageID: "msg_u", Name: markers["document name"]}}},
		{ID: "msg_a", WorkflowID: "wf_a", Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, Action: "document.extract",
			Text: markers["document content"], Summary: markers["history summary"], Findings: markers["history findings"], Learnings: []string{markers["learnings"]}},
	}
	conns := []workflow.Connection{{Label: markers["connection label"], Kind: "crm", Description: markers["connection detail"]}}
	reg := newRegistry()
	stage1 := `{"action": "ai.process", "actionObjective": "Summarise the extracted text", "learnings": ["MARK-LEARNING"],
		"requiredInputDocuments": ["docItem:doc_mark:MARK-DOC-NAME.pdf", "docList:msg_u:mark_doc_label"], "requiredConnection": "mark-connection",
		"parametersContext": "Write at most 100 words in German.",
		"parametersSchema": {"fields": [{"name": "language", "type": "string", "required": true, "description": "ISO code"}]}}`
	res := ParseStage1(stage1, Stage1Env{Registry: reg, Messages: msgs, Connections: conns})
	if len(res.Problems) > 0 {
		t.Fatalf("Stage 1 fixture rejected: %q", res.Problems)
	}
	spec, _ := reg.Action("ai.process")
	for _, feedback := range []string{"", Feedback([]string{"/instruction: missing required property"})} {
		r, err := b.Stage2(Stage2Input{Selection: res.Selection, Action: spec, Feedback: feedback})
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, m := range r.Messages {
			all.WriteString(m.Content)
		}
		for _, v := range r.Placeholders {
			all.WriteString(v)
		}
		for what, marker := range markers {
			if strings.Contains(strings.ToLower(all.String()), strings.ToLower(marker)) {
				t.Errorf("Stage 2 prompt contains the %s marker %q", what, marker)
			}
		}
		for _, must := range []string{"Summarise the extracted text", "ai.process", "Write at most 100 words in German.", `"language"`, `"instruction"`, "ISO code"} {
			if !strings.Contains(all.String(), must) {
				t.Errorf("Stage 2 prompt lacks %q", must)
			}
		}
	}
}

// askedFields is a Stage 1 parametersSchema.fields naming names.
func askedFields(names ...string) []workflow.FieldSpec {
	out := make([]workflow.FieldSpec, 0, len(names))
	for _, n := range names {
		out = append(out, workflow.FieldSpec{Name: n, Type: "string"})
	}
	return out
}

func TestStage2AcceptsOnlyAskedFields(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	open := workflow.ActionSpec{Name: "x.open", Parameters: []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	tests := []struct {
		name   string
		action workflow.ActionSpec
		asked  []workflow.FieldSpec
		params map[string]any
		want   []string
	}{
		{name: "asked plus required", action: spec, asked: askedFields("language"),
			params: map[string]any{"instruction": "x", "language": "de"}},
		{name: "registered but not asked", action: spec, asked: askedFields("language"),
			params: map[string]any{"instruction": "x", "language": "de", "maxWords": 3.0},
			want:   []string{"parameters.maxWords: not a field to fill: give only the fields instruction, language"}},
		{name: "nothing asked keeps the required", action: spec,
			params: map[string]any{"instruction": "x", "maxWords": 3.0, "language": "de"},
			want: []string{"parameters.language: not a field to fill: give only the fields instruction",
				"parameters.maxWords: not a field to fill: give only the fields instruction"}},
		{name: "open schema admits an asked unknown field", action: open, asked: askedFields("note"),
			params: map[string]any{"note": "n"}},
		{name: "open schema rejects an unasked one", action: open, asked: askedFields("note"),
			params: map[string]any{"note": "n", "a": "x"}, want: []string{"parameters.a: not a field to fill: give only the fields note"}},
		{name: "empty allowed set", action: open,
			params: map[string]any{"a": "x"}, want: []string{"parameters.a: not a field to fill: give only an empty parameters object"}},
		{name: "forbidden keys are left to the caller", action: spec, asked: askedFields("documents"),
			params: map[string]any{"instruction": "x", "documents": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, CheckAskedFields(tt.params, tt.action, tt.asked)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStage2RejectsAnUnaskedField(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	res := ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "maxWords": 5}}`, spec, askedFields("language"), reg)
	want := []string{"parameters.maxWords: not a field to fill: give only the fields instruction, language"}
	if diff := cmp.Diff(want, res.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	res = ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "language": "de"}}`, spec, askedFields("language"), reg)
	if len(res.Problems) != 0 || res.Parameters["language"] != "de" {
		t.Errorf("asked field rejected: %q %v", res.Problems, res.Parameters)
	}
}
