package workflow

// NewWorkflow is a request to create a workflow and start its first round.
type NewWorkflow struct {
	UserID    string
	Prompt    string
	Mode      ModeName // "" means ModeReact
	MaxSteps  int      // 0 means the engine's default
	Documents []DocumentContent
}

// NewRound is a request to start another round of an existing workflow.
type NewRound struct {
	Prompt    string
	Documents []DocumentContent
	// OnBusy says what happens while a round still runs or awaits
	// approval ("" means OnBusyReject).
	OnBusy OnBusy
}
