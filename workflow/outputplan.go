package workflow

// OutputPlanner is a Model that can say, before a call, which output mode
// it will send a request with (llm.Model and llm.Router can). A mode uses
// it to leave the reply's shape out of a prompt whose call gives the
// provider that shape natively (DESIGN §10.1), so the shape is sent once.
type OutputPlanner interface {
	// PlanOutput returns the mode Generate(req) would ask for first
	// (before any fallback after a refusal).
	PlanOutput(req ModelRequest) OutputMode
}

// PlannedOutput returns the output mode m plans for req, or OutputText
// when m cannot say (it is no OutputPlanner): the prompt then describes
// the reply itself, which every mode understands.
func PlannedOutput(m Model, req ModelRequest) OutputMode {
	if p, ok := m.(OutputPlanner); ok {
		if mode := p.PlanOutput(req); mode != "" {
			return mode
		}
	}
	return OutputText
}

// Request is the ModelRequest Run.Generate sends for the call.
func (call ModelCall) Request() ModelRequest {
	return ModelRequest{
		Messages: call.Prompt, JSON: call.JSON, MaxTokens: call.MaxTokens, Stage: call.Stage, Output: call.Output,
		CacheKey: call.CacheKey, CachePrefix: call.CachePrefix, CacheSealed: call.CacheSealed, Facts: call.Facts, Stream: call.Stream,
	}
}
