package apiv1

// Delta is the data of an event stream's `delta` event (DESIGN §11.3):
// the next piece of a field of a stage reply while the model writes it.
// Deltas are not stored and carry no event id; the committed message is
// the truth, and a client that reads slowly may miss some.
type Delta struct {
	Round int `json:"round" doc:"The round the reply belongs to"`
	Step  int `json:"step" doc:"The round step the reply belongs to"`
	// Stage is "stage1" or "stage2".
	Stage string `json:"stage" enum:"stage1,stage2" doc:"The stage writing"`
	// Field is "actionObjective" (Stage 1) or "message" (the answer of
	// Stage 2's workflow.complete).
	Field string `json:"field" doc:"The reply field: actionObjective (Stage 1) or message (Stage 2's workflow.complete)"`
	Text  string `json:"text" doc:"The new piece, appended to the field's earlier pieces"`
}
