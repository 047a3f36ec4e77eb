package client

import "github.com/twostep/twostep/apiv1"

// The client reads and sends the gateway's wire types (package apiv1);
// these names keep the client's own vocabulary for them.
type (
	// Workflow is a workflow as the API shows it; Running reports whether
	// its round still runs.
	Workflow = apiv1.WorkflowView
	// Stats counts a workflow's model calls, tokens and actions; ByStage
	// splits them by stage.
	Stats = apiv1.Stats
	// StageStats counts one stage's model calls and tokens.
	StageStats = apiv1.StageStats
	// QueuedRound is a round waiting for the workflow's current round
	// (sent with QueueRound while one ran).
	QueuedRound = apiv1.QueuedRoundView
	// ForkOrigin names the workflow and the step a fork was made from.
	ForkOrigin = apiv1.ForkOrigin
	// ForkRequest asks for a fork at step Step of round Round (see
	// Client.Fork). With Selection the fork's step starts at Stage 2; with
	// Parameters (for Selection, or else the selection the original
	// recorded at that step) at execution; with neither it runs the step
	// again.
	ForkRequest = apiv1.ForkBody
	// ForkSelection is an edited Stage 1 selection.
	ForkSelection = apiv1.ForkSelection
	// FieldsAsked lists the parameters a fork's selection asks Stage 2 to
	// fill.
	FieldsAsked = apiv1.ForkParametersSchema
	// ForkField is one parameter a fork's selection asks for.
	ForkField = apiv1.ForkField
	// FieldSpec is one parameter an intent approval's selection asks for:
	// its type is one of string, number, boolean, enum, object.
	FieldSpec = apiv1.FieldSpec
	// PendingApproval is the step a paused round waits on; decide it with
	// Client.Decide. Kind is call (approve the filled call) or intent
	// (approve Stage 1's decision before Stage 2: Parameters is nil,
	// ParametersContext and Fields say what Stage 2 will fill; narrow it
	// with Decision.Constraints).
	PendingApproval = apiv1.PendingApproval
	// StandingApproval is a decision kept with Decision.Remember: later
	// calls of Action it admits (satisfying Constraints, kind intent, or
	// repeating Parameters, kind call) run without a pause.
	StandingApproval = apiv1.StandingApprovalView
	// ApprovedBy names the standing approval that let a call run without
	// a pause and the person who granted it.
	ApprovedBy = apiv1.ApprovedBy
	// Message is one record of a workflow: a user prompt, an action's
	// result, an assistant answer or a history compaction's summary.
	Message = apiv1.MessageView
	// Document is a document's metadata; Client.Document reads its bytes.
	Document = apiv1.DocumentView
	// Action is an action the gateway offers, its parameters' JSON Schema
	// included.
	Action = apiv1.ActionView
	// Page is one page of the user's workflows, newest first.
	Page = apiv1.WorkflowList
	// Webhook asks for a workflow's round events at URL: the Events given
	// (round.completed, round.failed, round.stopped,
	// round.awaiting_approval), or all of them.
	Webhook = apiv1.WebhookInput
	// WebhookEvent is the body of a webhook delivery: the event type, when
	// it happened and the workflow as the API shows it.
	WebhookEvent = apiv1.WebhookEvent
	// Usage is the caller's budget and what its current period used
	// (GET /api/v1/usage). USD fields are nil when dollars are not
	// counted; a Limit field is nil when the budget sets no limit on it.
	Usage = apiv1.UsageView
)
