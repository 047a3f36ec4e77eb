package actions

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Execute runs one action. It validates the parameters again, checks the
// documents the action needs and the connection (owned by call.UserID, of
// the action's kind), fills in the idempotency key when the caller left it
// empty, and recovers a panicking action into an internal error. A returned
// error is an explained step failure: its workflow.PublicMessage says what a
// person (or the model) can do about it; beside an error the result holds
// only the model calls the action made (ModelCalls), for their traces.
// Neither the result (model calls included) nor the error ever carries a
// secret.
func (r *Registry) Execute(ctx context.Context, call workflow.ActionCall) (res workflow.ActionResult, err error) {
	start := time.Now()
	defer func() { r.logExecution(call, start, err) }()
	a, ok := r.lookup(call.Action, call.UserID)
	if !ok || (a.user != "" && a.user != call.UserID) {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindNotFound, "unknown action %s", quote(call.Action))
	}
	params, err := workflow.NormalizeParams(call.Parameters)
	if err != nil {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInvalid, err, "the parameters for %s are not JSON", call.Action)
	}
	call.Parameters = params
	if lines := a.problems(params); len(lines) > 0 {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
			"invalid parameters for %s:\n%s", call.Action, strings.Join(lines, "\n"))
	}
	if line := workflow.DocumentsProblem(a.spec, len(call.Documents), "documents"); line != "" {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid, "%s", line)
	}
	conn, err := r.connectionFor(a.spec, call)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	if call.IdempotencyKey == "" {
		call.IdempotencyKey = workflow.StepKey(call.WorkflowID, call.Round, call.Step)
	}
	res, err = r.runSafely(ctx, a, invocation{call: call, conn: conn})
	if err != nil {
		// A failed action still reports the model calls it made.
		return r.scrubResult(workflow.ActionResult{ModelCalls: res.ModelCalls}), r.scrubError(err)
	}
	return r.scrubResult(res), nil
}

// runSafely runs the action, turning a panic into an internal error.
func (r *Registry) runSafely(ctx context.Context, a action, inv invocation) (res workflow.ActionResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = workflow.WrapKind(workflow.KindInternal, fmt.Errorf("panic: %v", p), "%s failed unexpectedly", a.spec.Name)
		}
	}()
	if err := ctx.Err(); err != nil {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindUnavailable, err, "%s was cancelled", a.spec.Name)
	}
	return a.run(ctx, inv)
}

// connectionFor resolves the call's connection for the action: nil when the
// action takes none and none was given; an error when one is required and
// missing, not owned by the user, or of the wrong kind.
func (r *Registry) connectionFor(spec workflow.ActionSpec, call workflow.ActionCall) (*connection, error) {
	label := ""
	if call.Connection != nil {
		label = call.Connection.Label
	}
	if label != "" && spec.ConnectionKind == "" {
		return nil, nil // the action uses no connection; ignore the reference
	}
	// The registry's own table is the authority on what the user owns; the
	// rule and its wording are workflow.ConnectionProblem's.
	c := r.conns[call.UserID][label]
	line := workflow.ConnectionProblem(spec, true, label, r.Connections(call.UserID), "connection")
	switch {
	case line != "" && label != "" && c == nil:
		return nil, workflow.Errorf(workflow.KindNotFound, "%s", line)
	case line != "":
		return nil, workflow.Errorf(workflow.KindInvalid, "%s", line)
	}
	return c, nil
}

// logExecution writes one line per execution: who, what, how long, outcome.
// It never logs parameters, documents or headers; the error is scrubbed.
func (r *Registry) logExecution(call workflow.ActionCall, start time.Time, err error) {
	ev := r.log.Info()
	switch kind := workflow.KindOf(err); {
	case err == nil:
	case kind == workflow.KindInternal:
		ev = r.log.Error().Str("error", r.scrubString(err.Error())).Str("kind", string(kind))
	default:
		ev = r.log.Warn().Str("error", r.scrubString(err.Error())).Str("kind", string(kind))
	}
	label := ""
	if call.Connection != nil {
		label = call.Connection.Label
	}
	ev.Str("action", call.Action).
		Str("workflowId", call.WorkflowID).
		Int("round", call.Round).
		Int("step", call.Step).
		Str("connection", label).
		Str("idempotencyKey", call.IdempotencyKey).
		Int("documents", len(call.Documents)).
		Dur("duration", time.Since(start)).
		Msg("action executed")
}
