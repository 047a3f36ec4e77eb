package redact_test

import (
	"testing"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// The engine finds the approval index of the store under the redacting
// decorator, so approvals expire from the index, not from a listing scan.
func TestTracesDecoratorExposesTheApprovalIndex(t *testing.T) {
	t.Parallel()
	raw := memstore.New()
	if got := workflow.StoreAs[workflow.ApprovalIndex](redact.Traces(raw, redact.New("s3cret-value"))); got != workflow.ApprovalIndex(raw) {
		t.Errorf("StoreAs[ApprovalIndex](decorated) = %v, want the wrapped memory store", got)
	}
}
