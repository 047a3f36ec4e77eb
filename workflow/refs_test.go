package workflow_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

func TestParseReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    workflow.Reference
		wantErr string
	}{
		{in: "docList:msg_01abc:round1_user_context", want: workflow.Reference{Kind: workflow.RefDocList, MessageID: "msg_01abc", Label: "round1_user_context"}},
		{in: "docList:round1_step2_ai_process", want: workflow.Reference{Kind: workflow.RefDocList, Label: "round1_step2_ai_process"}},
		{in: "docItem:doc_9z:report.pdf", want: workflow.Reference{Kind: workflow.RefDocItem, DocumentID: "doc_9z", FileName: "report.pdf"}},
		{in: "docItem:doc_9z:notes: v2.txt", want: workflow.Reference{Kind: workflow.RefDocItem, DocumentID: "doc_9z", FileName: "notes: v2.txt"}},
		{in: "  docItem:doc_9z  ", want: workflow.Reference{Kind: workflow.RefDocItem, DocumentID: "doc_9z"}},
		{in: "", wantErr: "want docList:"},
		{in: "docList:", wantErr: "want docList:"},
		{in: "file:doc_1", wantErr: `unknown kind "file"`},
		{in: "docItem:msg_1:a.txt", wantErr: `malformed document id "msg_1"`},
		{in: "docItem:doc_1:", wantErr: "empty file name"},
		{in: "docItem:doc_A:x", wantErr: "malformed document id"},
		{in: "docList:msg_1:", wantErr: `malformed label ""`},
		{in: "docList:msg_$:x", wantErr: "malformed message id"},
		{in: "docList:two words", wantErr: "malformed label"},
		{in: "docItem:doc_1:" + strings.Repeat("a", 600), wantErr: "longer than 512 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := workflow.ParseReference(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || workflow.KindOf(err) != workflow.KindInvalid {
					t.Fatalf("ParseReference(%q) error = %v, want invalid containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseReference(%q) (-want +got):\n%s", tt.in, diff)
			}
			again, err := workflow.ParseReference(got.String())
			if err != nil || again != got {
				t.Errorf("String() %q does not parse back: %v, %v", got.String(), again, err)
			}
		})
	}
}

// refFixture is one workflow's messages: a user upload, two action
// outputs with the same label (the later wins for docList:<label>), and a
// message from another workflow slipped in.
func refFixture() []workflow.Message {
	doc := func(id, msg, name string) workflow.Document {
		return workflow.Document{ID: id, WorkflowID: "wf_a", MessageID: msg, Name: name, MimeType: "text/plain", Size: 3}
	}
	return []workflow.Message{
		{ID: "msg_u1", WorkflowID: "wf_a", Seq: 1, Round: 1, Role: workflow.RoleUser, DocumentsLabel: "round1_user_context",
			Documents: []workflow.Document{doc("doc_u1", "msg_u1", "brief.txt"), doc("doc_u2", "msg_u1", "data.csv")}},
		{ID: "msg_a1", WorkflowID: "wf_a", Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, DocumentsLabel: "report",
			Documents: []workflow.Document{doc("doc_r1", "msg_a1", "old.md")}},
		{ID: "msg_a2", WorkflowID: "wf_a", Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAction, DocumentsLabel: "report",
			Documents: []workflow.Document{doc("doc_r2", "msg_a2", "new.md")}},
		{ID: "msg_x1", WorkflowID: "wf_other", Seq: 4, Round: 1, Role: workflow.RoleUser, DocumentsLabel: "secret_context",
			Documents: []workflow.Document{{ID: "doc_x1", WorkflowID: "wf_other", MessageID: "msg_x1", Name: "secret.txt"}}},
		{ID: "msg_a3", WorkflowID: "wf_a", Seq: 5, Round: 1, Step: 3, Role: workflow.RoleAction, DocumentsLabel: "mixed",
			Documents: []workflow.Document{{ID: "doc_y1", WorkflowID: "wf_other", MessageID: "msg_a3", Name: "smuggled.txt"}}},
	}
}

func TestResolveDocuments(t *testing.T) {
	t.Parallel()
	msgs := refFixture()
	tests := []struct {
		name    string
		refs    []string
		want    []string // document ids
		wantErr []string
	}{
		{name: "docList by id and label", refs: []string{"docList:msg_u1:round1_user_context"}, want: []string{"doc_u1", "doc_u2"}},
		{name: "docList by label takes the latest", refs: []string{"docList:report"}, want: []string{"doc_r2"}},
		{name: "docItem with and without name", refs: []string{"docItem:doc_r1:old.md", "docItem:doc_u2"}, want: []string{"doc_r1", "doc_u2"}},
		{name: "deduplicated in reference order", refs: []string{"docItem:doc_u2", "docList:msg_u1:round1_user_context", "docItem:doc_u2:data.csv"}, want: []string{"doc_u2", "doc_u1"}},
		{name: "none", refs: nil, want: nil},
		{name: "file name must match", refs: []string{"docItem:doc_u1:other.txt"}, wantErr: []string{`"docItem:doc_u1:other.txt"`, `named "brief.txt", not "other.txt"`}},
		{name: "label must match the message", refs: []string{"docList:msg_a1:wrong"}, wantErr: []string{`message msg_a1 has label "report", not "wrong"`}},
		{name: "another workflow's message", refs: []string{"docList:msg_x1:secret_context"}, wantErr: []string{"no message of this workflow"}},
		{name: "another workflow's document", refs: []string{"docItem:doc_x1"}, wantErr: []string{"no document of this workflow"}},
		{name: "another workflow's document on our message", refs: []string{"docItem:doc_y1:smuggled.txt"}, wantErr: []string{"no document of this workflow"}},
		{name: "unknown label", refs: []string{"docList:nothing_here"}, wantErr: []string{`"docList:nothing_here"`}},
		{name: "every bad reference is named", refs: []string{"docItem:doc_u1", "docItem:doc_zz", "bogus"}, wantErr: []string{`"docItem:doc_zz"`, `"bogus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs, err := workflow.ResolveDocuments(msgs, tt.refs)
			if len(tt.wantErr) > 0 {
				if err == nil || workflow.KindOf(err) != workflow.KindInvalid {
					t.Fatalf("ResolveDocuments() error = %v, want KindInvalid", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if docs != nil {
					t.Errorf("documents returned with an error: %v", docs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveConnection(t *testing.T) {
	t.Parallel()
	conns := []workflow.Connection{{Label: "crm", Kind: "crm", Description: "CRM"}, {Label: "erp-test", Kind: "erp"}}
	c, err := workflow.ResolveConnection(conns, "erp-test")
	if err != nil || c.Label != "erp-test" || c.Kind != "erp" {
		t.Fatalf("ResolveConnection(erp-test) = %+v, %v", c, err)
	}
	c.Label = "changed"
	if conns[1].Label != "erp-test" {
		t.Error("the returned connection aliases the input slice")
	}
	tests := []struct {
		label string
		conns []workflow.Connection
		want  string
	}{
		{"", conns, "connection label is empty"},
		{"bank", conns, `connection "bank" is not one of yours (available: crm, erp-test)`},
		{"crm", nil, `connection "crm" is not one of yours (you have no connections)`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := workflow.ResolveConnection(tt.conns, tt.label)
			if err == nil || err.Error() != tt.want || workflow.KindOf(err) != workflow.KindInvalid {
				t.Errorf("ResolveConnection(%q) error = %v, want %q", tt.label, err, tt.want)
			}
		})
	}
}

func FuzzParseReference(f *testing.F) {
	for _, s := range []string{"docList:msg_1:round1_user_context", "docList:x", "docItem:doc_1:a:b.txt", "docItem:doc_1", ":", "docItem:", "docList:msg_:x"} {
		f.Add(s)
	}
	msgs := refFixture()
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := workflow.ParseReference(s)
		if err != nil {
			if workflow.KindOf(err) != workflow.KindInvalid {
				t.Fatalf("error of kind %s", workflow.KindOf(err))
			}
			return
		}
		again, err := workflow.ParseReference(ref.String())
		if err != nil || again != ref {
			t.Fatalf("%q parsed to %+v, whose String %q parses to %+v, %v", s, ref, ref.String(), again, err)
		}
		docs, err := workflow.ResolveDocuments(msgs, []string{s})
		if err != nil && docs != nil {
			t.Fatalf("%q was refused (%v) yet resolved %d documents", s, err, len(docs))
		}
		for _, d := range docs {
			if d.WorkflowID != "wf_a" {
				t.Fatalf("%q resolved to another workflow's document %s", s, d.ID)
			}
		}
	})
}
