package engine

import "github.com/twostep/twostep/workflow"

// NewWorkflow is a request to create a workflow and start its first round.
type NewWorkflow struct {
	UserID    string
	Prompt    string
	Mode      workflow.ModeName // "" means ModeReact
	MaxSteps  int               // 0 means the engine's default
	Documents []workflow.DocumentContent
	// Webhook, when set, receives the workflow's round events (its URL
	// checked and its secret made by the caller).
	Webhook *workflow.WebhookSubscription
}

// NewRound is a request to start another round of an existing workflow.
type NewRound struct {
	Prompt    string
	Documents []workflow.DocumentContent
	// OnBusy says what happens while a round still runs or awaits
	// approval ("" means OnBusyReject).
	OnBusy workflow.OnBusy
}
