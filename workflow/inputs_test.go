package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

func TestCheckStepInputs(t *testing.T) {
	t.Parallel()
	reader := workflow.ActionSpec{Name: "doc.read", Documents: workflow.DocumentsRequired}
	remote := workflow.ActionSpec{Name: "crm.lookup", ConnectionKind: "crm", ConnectionRequired: true}
	conns := []workflow.Connection{{Label: "crm-prod", Kind: "crm"}, {Label: "ledger", Kind: "sql"}}
	fields := workflow.InputFields{Documents: "docs", Connection: "conn"}
	tests := []struct {
		name string
		in   workflow.StepInputs
		want []string
	}{
		{"valid documents", workflow.StepInputs{Action: reader, Known: true, Documents: []string{"docItem:doc_u1", "docList:report"}}, nil},
		{"unresolved reference with its index", workflow.StepInputs{Action: reader, Known: true, Documents: []string{"docItem:doc_u1", "docItem:doc_x1"}},
			[]string{`docs[1]: document reference "docItem:doc_x1": no document of this workflow has that id; copy a reference exactly from the documents index`}},
		{"a later step's label", workflow.StepInputs{Action: reader, Known: true, Documents: []string{"docList:summary"}, Later: map[string]bool{"summary": true}}, nil},
		{"a later label with a message id is not", workflow.StepInputs{Action: reader, Known: true, Documents: []string{"docList:msg_zz:summary"}, Later: map[string]bool{"summary": true}},
			[]string{`docs[0]: document reference "docList:msg_zz:summary": no message of this workflow has it; copy a reference exactly from the documents index`}},
		{"documents required", workflow.StepInputs{Action: reader, Known: true},
			[]string{`action "doc.read" needs input documents: list them in "docs"`}},
		{"unknown action: only references", workflow.StepInputs{Action: reader, Known: false}, nil},
		{"connection required", workflow.StepInputs{Action: remote, Known: true, Connections: conns},
			[]string{`action "crm.lookup" needs a connection of kind "crm": set "conn" to one of: crm-prod`}},
		{"connection not owned", workflow.StepInputs{Action: remote, Known: true, Connection: "erp", Connections: conns},
			[]string{`conn: connection "erp" is not one of yours (available: crm-prod, ledger)`}},
		{"connection of another kind", workflow.StepInputs{Action: remote, Known: true, Connection: "ledger", Connections: conns},
			[]string{`connection "ledger" is of kind "sql", but action "crm.lookup" uses kind "crm": set "conn" to one of: crm-prod`}},
		{"no connection of the kind", workflow.StepInputs{Action: remote, Known: true, Connections: conns[1:]},
			[]string{`action "crm.lookup" needs a connection of kind "crm": set "conn" to one of: (you have no such connection)`}},
		{"an unknown action's connection must still be owned", workflow.StepInputs{Action: remote, Connection: "erp", Connections: conns},
			[]string{`conn: connection "erp" is not one of yours (available: crm-prod, ledger)`}},
		{"forbidden keys in any case, sorted", workflow.StepInputs{Parameters: map[string]any{"text": "x", "History": 1, "documentList": []any{}}},
			[]string{
				"parameters.History: forbidden key: documents, connections and history are attached by the engine, never passed as parameters",
				"parameters.documentList: forbidden key: documents, connections and history are attached by the engine, never passed as parameters",
			}},
		{"every broken rule, in order", workflow.StepInputs{Action: workflow.ActionSpec{Name: "both", Documents: workflow.DocumentsRequired, ConnectionKind: "crm", ConnectionRequired: true},
			Known: true, Parameters: map[string]any{"connections": "x"}, Connections: conns},
			[]string{
				"parameters.connections: forbidden key: documents, connections and history are attached by the engine, never passed as parameters",
				`action "both" needs input documents: list them in "docs"`,
				`action "both" needs a connection of kind "crm": set "conn" to one of: crm-prod`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.in
			in.Messages, in.Fields = refFixture(), fields
			if got := workflow.CheckStepInputs(in); !slices.Equal(got, tt.want) {
				t.Errorf("CheckStepInputs() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestConnectionProblemBoundsQuotedText(t *testing.T) {
	t.Parallel()
	label := strings.Repeat("é", 400)
	line := workflow.ConnectionProblem(workflow.ActionSpec{}, false, label, nil, "conn")
	if len(line) > len("conn: ")+400+len("…") || !strings.HasSuffix(line, "…") {
		t.Errorf("line of %d bytes, want at most 400 bytes of message and an ellipsis: %q", len(line), line[:60])
	}
}
