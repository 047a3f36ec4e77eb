package httpapi

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// wireOf converts a domain value to its wire type W field by field: each
// field of W takes the domain field of the same JSON name, converted the
// same way (a named string to a string, a struct to its wire struct, a
// slice item by item; a zero value to a nil pointer, as omitzero leaves it
// out); a field W has and the domain type lacks stays zero. A domain type
// with its own JSON encoding (workflow.StageTable) goes through
// encoding/json. Maps and slices of the same type are shared, not copied:
// a view is encoded, never changed. It is httpapi's one way from domain to
// wire, so a field added to both needs no code here; the view functions
// below only add what the domain form lacks (arrays never null, values
// computed for the API).
//
// Both types are the server's own, so a failure is a bug:
// TestWireMirrorsDomain converts every mirrored type with every field set.
func wireOf[W any](v any) W {
	var w W
	src := reflect.ValueOf(v)
	if err := planOf(reflect.TypeFor[W](), src.Type())(reflect.ValueOf(&w).Elem(), src); err != nil {
		panic(fmt.Sprintf("httpapi: converting %T to %T: %v", v, w, err))
	}
	return w
}

// jsonName is the name encoding/json gives f: its tag's, else its own.
// It reads the tag without unquoting it (the server's JSON names hold no
// escapes), which keeps a conversion cheap.
func jsonName(f reflect.StructField) string {
	_, tag, ok := strings.Cut(string(f.Tag), `json:"`)
	if !ok {
		return f.Name
	}
	end := strings.IndexByte(tag, '"')
	if c := strings.IndexByte(tag[:max(end, 0)], ','); c >= 0 {
		end = c
	}
	if end <= 0 {
		return f.Name
	}
	return tag[:end]
}

// viewWorkflow is w as the API shows it: without its version, checkpoint
// and trace context; its stats by stage, queued rounds and the pending
// approval's lists never null.
func viewWorkflow(w *workflow.Workflow) apiv1.WorkflowView {
	v := wireOf[apiv1.WorkflowView](w)
	if v.Stats.ByStage == nil {
		v.Stats.ByStage = map[string]apiv1.StageStats{}
	}
	v.PendingApproval = pendingView(v.PendingApproval)
	v.QueuedRounds = nonNil(v.QueuedRounds)
	for i := range v.QueuedRounds {
		q := &v.QueuedRounds[i]
		q.Round = w.Round + i + 1
		q.Title = workflow.TitleOf(w.QueuedRounds[i].Prompt)
		q.Documents = nonNil(q.Documents)
	}
	return v
}

// viewMessage is m as the API shows it: its documents without their
// owners, its lists never null.
func viewMessage(m workflow.Message) apiv1.MessageView {
	v := wireOf[apiv1.MessageView](m)
	v.Documents = nonNil(v.Documents)
	v.Learnings = nonNil(v.Learnings)
	return v
}

// viewPending is a pending approval as the API and the approval event show
// it (pendingView); nil for nil.
func viewPending(p *workflow.PendingApproval) *apiv1.PendingApproval {
	if p == nil {
		return nil
	}
	v := wireOf[apiv1.PendingApproval](p)
	return pendingView(&v)
}

// pendingView completes a converted pending approval: its lists are never
// null, its kind is call when it was stored before kinds existed, and its
// parameters are null only for an intent (Stage 2 has not filled them; {}
// for a call with none). Nil stays nil.
func pendingView(v *apiv1.PendingApproval) *apiv1.PendingApproval {
	if v == nil {
		return nil
	}
	if v.Kind == "" {
		v.Kind = string(workflow.ApprovalCall)
	}
	v.Documents = nonNil(v.Documents)
	if v.Parameters == nil && v.Kind == string(workflow.ApprovalCall) {
		v.Parameters = map[string]any{}
	}
	return v
}

// viewStanding is a standing approval as the API shows it: of kind intent
// with its constraints (a fragment that is no JSON object shows as null),
// of kind call without.
func viewStanding(a workflow.StandingApproval) apiv1.StandingApprovalView {
	constraints := a.Constraints
	a.Constraints = nil // map[string]any here, one object per field there
	v := wireOf[apiv1.StandingApprovalView](a)
	if a.Kind == workflow.ApprovalIntent {
		v.Constraints = make(map[string]map[string]any, len(constraints))
		for k, c := range constraints {
			frag, _ := c.(map[string]any)
			v.Constraints[k] = frag
		}
	}
	return v
}

// nonNil returns s, or an empty slice for nil, so it encodes as [] and
// never as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
