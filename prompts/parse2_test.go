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
			want:   []string{"/instruction: missing required property", "/maxWords: got string, want number", "/tone: additional property not allowed"}},
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
			res := ParseStage2(tt.reply, spec, reg)
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
