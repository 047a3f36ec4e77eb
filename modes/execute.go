package modes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// StepCall is one step to execute, whichever mode chose it.
type StepCall struct {
	Action     string
	Objective  string
	Learnings  []string
	Parameters map[string]any
	// Documents are the document references the action reads; Connection
	// is the label of the connection it uses ("" for none).
	Documents  []string
	Connection string
	// Label overrides the output documents' label (the action-plan mode's
	// resultLabel); "" means round{R}_step{S}_{method}_{action}.
	Label string
	// OnFailure, when set, is the checkpoint the following step starts
	// from if this one fails (inputs that do not resolve, an action error)
	// instead of next: the action-plan mode re-plans from it.
	OnFailure *workflow.Checkpoint
}

// Execute runs call as the current step of run and commits it: it resolves
// the document references and the connection server-side (references that
// do not resolve, or a missing required connection, make a failed step
// without running the action), runs the action through the registry with
// the step's idempotency key, and commits the action message with its
// output documents atomically (an action error is a failed step). next is
// the checkpoint the following step starts from (nil for react).
//
// The model calls the action reports (ActionResult.ModelCalls, also beside
// an error) are stored as traces of stage action and counted in the
// workflow's stats by the same commit as the action message
// (Run.RecordActionCalls). An action whose model call the user's budget
// refused (a *workflow.BudgetError) commits nothing: the error is returned
// and the round stops for the budget.
//
// When ctx is cancelled while the action runs and the action fails, nothing
// is committed and the context's error is returned: the step runs again on
// resume, with the same idempotency key (its model calls are traced, but
// counted only by the run that commits the step). An action that finished
// is still committed (under the version check, so a Stop wins).
//
// Once its inputs resolve, the call passes the approval gate (Run.Gate at
// the call moment, DESIGN §9.1): a call the policy holds pauses the round
// awaiting approval and does not run. After an approve decision the step
// comes back here and runs with the approved parameters (an intent
// grant's parameters are Stage 2's). A held call that a standing approval
// admits (DESIGN §10.4) runs without a pause, its action message naming
// that approval and who granted it (ApprovedBy).
func Execute(ctx context.Context, run workflow.Run, call StepCall, next *workflow.Checkpoint) error {
	in, err := resolve(ctx, run, call)
	if err != nil {
		return failInputs(ctx, run, call, next, err)
	}
	verdict, err := run.Gate(ctx, workflow.Gate{
		Moment: workflow.MomentCall, Action: call.Action, Objective: call.Objective, Parameters: call.Parameters,
		Documents: call.Documents, Connection: call.Connection, Reject: next,
	})
	if verdict.Paused || err != nil {
		return err
	}
	grant := verdict.Grant
	if grant != nil && grant.Parameters != nil && !reflect.DeepEqual(grant.Parameters, call.Parameters) {
		// A person edited the parameters: the call runs with them (an
		// intent grant has none: Stage 2 filled them).
		call.Parameters = grant.Parameters
		if in, err = resolve(ctx, run, call); err != nil {
			return failInputs(ctx, run, call, next, err)
		}
	}
	wf := run.Workflow()
	start := time.Now()
	res, aerr := execute(ctx, run.Registry(), in)
	d := time.Since(start)
	// The action's own model calls are traced and counted before the
	// commit below, which persists their stats with the action message.
	run.RecordActionCalls(ctx, res.ModelCalls)
	if aerr != nil && ctx.Err() != nil {
		return ctx.Err() // failed because it was cancelled: not the action's fault
	}
	if be := (*workflow.BudgetError)(nil); errors.As(aerr, &be) {
		// The action's model call was refused: the round stops for the
		// budget (nothing committed) and the step runs again on resume.
		return aerr
	}
	if aerr != nil {
		res = workflow.ActionResult{} // only ModelCalls count beside an error
		next = call.failed(next)
	}
	traceAction(ctx, run, call, res, aerr, d)
	msg, docs := messages.NewAction(messages.ActionInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Action: call.Action,
		Objective: call.Objective, Learnings: call.Learnings, Parameters: call.Parameters,
		Result: res, Err: publicError(aerr), Label: call.Label,
	})
	msg.DurationMs = d.Milliseconds()
	if grant != nil {
		msg.ApprovedBy = grant.ApprovedBy
	}
	return run.CommitStep(ctx, workflow.StepResult{
		Action: call.Action, Messages: []workflow.Message{msg}, Documents: docs,
		Failed: aerr != nil, Executed: true, Next: next,
	})
}

// failInputs fails the step of call whose inputs did not resolve (err),
// or returns err when it is not about the inputs.
func failInputs(ctx context.Context, run workflow.Run, call StepCall, next *workflow.Checkpoint, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if workflow.KindOf(err) != workflow.KindInvalid && workflow.KindOf(err) != workflow.KindNotFound {
		return err
	}
	return Fail(ctx, run, Failure{Action: call.Action, Objective: call.Objective, Learnings: call.Learnings,
		Reason: "inputs did not resolve: " + workflow.PublicMessage(err), Next: call.failed(next)})
}

// failed returns the checkpoint after the step when it fails.
func (c StepCall) failed(next *workflow.Checkpoint) *workflow.Checkpoint {
	if c.OnFailure != nil {
		return c.OnFailure
	}
	return next
}

// execute runs the action, turning a panic into an explained step failure.
func execute(ctx context.Context, reg workflow.Registry, in workflow.ActionCall) (res workflow.ActionResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = workflow.ActionResult{}, workflow.Errorf(workflow.KindInternal, "action %s panicked: %v", in.Action, p)
		}
	}()
	return reg.Execute(ctx, in)
}

// resolve turns call into an ActionCall: documents with their bytes, the
// connection's public description, the idempotency key.
func resolve(ctx context.Context, run workflow.Run, call StepCall) (workflow.ActionCall, error) {
	wf := run.Workflow()
	spec, ok := run.Registry().Action(call.Action)
	if !ok {
		return workflow.ActionCall{}, workflow.Errorf(workflow.KindInvalid, "action %q is not registered", call.Action)
	}
	if lines := workflow.CheckStepInputs(workflow.StepInputs{
		Action: spec, Known: true, Parameters: call.Parameters, Documents: call.Documents, Connection: call.Connection,
		Messages: run.Messages(), Connections: run.Connections(), Fields: stepFields,
	}); len(lines) > 0 {
		return workflow.ActionCall{}, workflow.Errorf(workflow.KindInvalid, "%s", strings.Join(lines, "; "))
	}
	metas, err := workflow.ResolveDocuments(run.Messages(), call.Documents)
	if err != nil {
		return workflow.ActionCall{}, err
	}
	docs := make([]workflow.DocumentContent, 0, len(metas))
	for _, d := range metas {
		c, err := run.DocumentContent(ctx, d.ID)
		if err != nil {
			return workflow.ActionCall{}, fmt.Errorf("reading document %s: %w", d.ID, err)
		}
		docs = append(docs, c)
	}
	var conn *workflow.Connection
	if call.Connection != "" {
		if conn, err = workflow.ResolveConnection(run.Connections(), call.Connection); err != nil {
			return workflow.ActionCall{}, err
		}
	}
	return workflow.ActionCall{
		WorkflowID: wf.ID, UserID: wf.UserID, Round: wf.Round, Step: wf.Step, Action: call.Action,
		Parameters: workflow.CloneParams(call.Parameters), Documents: docs, Connection: conn, IdempotencyKey: run.IdempotencyKey(),
		FencingToken: run.Fence(),
	}, nil
}

// stepFields name a step's inputs in its failure reason, whichever mode
// chose them.
var stepFields = workflow.InputFields{Documents: "documents", Connection: "connection"}

// publicError keeps only the caller-safe text of an action error for the
// message (the full error goes to the trace).
func publicError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s", workflow.PublicMessage(err))
}

// traceAction records the action's execution as a trace of stage action:
// parameters as parsed (their json.Marshal bytes; none when they cannot be
// encoded), an excerpt of the result, the error, the latency.
func traceAction(ctx context.Context, run workflow.Run, call StepCall, res workflow.ActionResult, err error, d time.Duration) {
	params, perr := json.Marshal(call.Parameters)
	if perr != nil {
		params = nil
	}
	t := workflow.Trace{
		Round: run.Workflow().Round, Step: run.Workflow().Step, Stage: workflow.StageAction, Attempt: 1,
		Template: call.Action, Response: textclip.Clip(res.Text, 2000), Parsed: params, LatencyMs: d.Milliseconds(),
	}
	if err != nil {
		t.Error = workflow.PublicMessage(err)
	}
	run.RecordTrace(t)
}
