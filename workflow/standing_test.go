package workflow_test

import (
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestStandingSameTarget: a standing approval admits only calls through
// the connection it was granted for and with the same document
// references (in any order); one kept before grants were bound (no
// connection) admits only calls without one.
func TestStandingSameTarget(t *testing.T) {
	t.Parallel()
	s := workflow.StandingApproval{Connection: "low", Documents: []string{"doc_a", "doc_b"}}
	tests := []struct {
		conn string
		docs []string
		want bool
	}{
		{"low", []string{"doc_b", "doc_a"}, true},
		{"low", []string{"doc_a", "doc_b", "doc_a"}, true},
		{"high", []string{"doc_a", "doc_b"}, false},
		{"", []string{"doc_a", "doc_b"}, false},
		{"low", []string{"doc_a"}, false},
		{"low", []string{"doc_a", "doc_c"}, false},
		{"low", nil, false},
	}
	for _, tt := range tests {
		if got := s.SameTarget(tt.conn, tt.docs); got != tt.want {
			t.Errorf("SameTarget(%q, %v) = %v, want %v", tt.conn, tt.docs, got, tt.want)
		}
	}
	old := workflow.StandingApproval{}
	if !old.SameTarget("", nil) || !old.SameTarget("", []string{}) || old.SameTarget("low", nil) {
		t.Error("an unbound grant must admit exactly the calls without connection or documents")
	}
}
