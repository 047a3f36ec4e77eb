package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/workflow"
)

// resume decides the thread's pending approval from the run's resume
// entry (through the approvals route's checks) and plans the rest of the
// paused round. Every refusal is a RUN_ERROR: the approval stays
// pending.
func (h *Handler) resume(ctx context.Context, srv *httpapi.Server, user, id string, entries []ResumeEntry) (plan, error) {
	if len(entries) != 1 {
		return plan{}, &runError{code: "invalid_resume", msg: fmt.Sprintf("resume answers %d interrupts; a thread has one pending at a time", len(entries))}
	}
	e := entries[0]
	w, err := h.eng.Get(ctx, user, id)
	if workflow.KindOf(err) == workflow.KindNotFound {
		return plan{}, &runError{code: "unknown_interrupt", msg: "this thread's workflow is gone"}
	}
	if err != nil {
		return plan{}, err
	}
	p := w.PendingApproval
	if w.Status != workflow.StatusAwaitingApproval || p == nil || p.ID != e.InterruptID {
		return plan{}, &runError{code: "unknown_interrupt", msg: fmt.Sprintf("interrupt %q is not pending on this thread", e.InterruptID)}
	}
	body, err := decisionBody(e)
	if err != nil {
		return plan{}, &runError{code: "invalid_resume", msg: err.Error()}
	}
	if _, err := srv.Decide(ctx, user, id, p.ID, body); err != nil {
		var se huma.StatusError
		if errors.As(err, &se) && se.GetStatus() < 500 {
			return plan{}, &runError{code: "invalid_resume", msg: problemText(err)}
		}
		return plan{}, err
	}
	pl := plan{workflowID: id, round: p.Round, fromStep: p.Step}
	if p.KindOrCall() == workflow.ApprovalCall {
		pl.resumedCall = [2]int{p.Round, p.Step}
	}
	return pl, nil
}

// decisionBody reads a resume entry as the approvals route's body:
// cancelled rejects; resolved takes the payload.
func decisionBody(e ResumeEntry) (apiv1.DecisionBody, error) {
	var body apiv1.DecisionBody
	if e.Status == "cancelled" {
		body.Decision = "reject"
		return body, nil
	}
	if len(e.Payload) == 0 {
		return body, errors.New("a resolved resume entry needs a payload {decision: approve|reject, ...}")
	}
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return body, fmt.Errorf("payload: %v (expected {decision, parameters?, constraints?, comment?, remember?})", err)
	}
	switch {
	case body.Decision != "approve" && body.Decision != "reject":
		return body, errors.New("payload.decision must be approve or reject")
	case len(body.Comment) > 2000:
		return body, errors.New("payload.comment is longer than 2000 characters")
	case body.Remember != nil && body.Remember.Scope != "workflow" && body.Remember.Scope != "user":
		return body, errors.New("payload.remember.scope must be workflow or user")
	}
	return body, nil
}

// problemText is a refusal's message with its details, for a RUN_ERROR.
func problemText(err error) string {
	var m *huma.ErrorModel
	if !errors.As(err, &m) {
		return err.Error()
	}
	parts := []string{m.Detail}
	for _, d := range m.Errors {
		parts = append(parts, strings.TrimPrefix(d.Location, "body.")+": "+d.Message)
	}
	return strings.Join(parts, "; ")
}
