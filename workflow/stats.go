package workflow

import "maps"

// StageStats counts the model calls of one stage (DESIGN §9.5
// stats.byStage).
type StageStats struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// countCall adds one model call of stage to the totals and to ByStage.
// The engine calls it on the run's own state, so the call is persisted by
// the same atomic commit (Checkpoint or CommitStep) as the phase it
// belongs to: a crash before that commit repeats the call and counts it
// once.
func (s *Stats) countCall(stage Stage, promptTokens, completionTokens int) {
	s.LLMCalls++
	s.PromptTokens += promptTokens
	s.CompletionTokens += completionTokens
	if s.ByStage == nil {
		s.ByStage = map[Stage]StageStats{}
	}
	b := s.ByStage[stage]
	b.Calls++
	b.PromptTokens += promptTokens
	b.CompletionTokens += completionTokens
	s.ByStage[stage] = b
}

// Public returns s as the API shows it: ByStage is never nil, so every
// workflow has the field (DESIGN §9.5), {} before its first call.
func (s Stats) Public() Stats {
	s = s.clone()
	if s.ByStage == nil {
		s.ByStage = map[Stage]StageStats{}
	}
	return s
}

// clone returns s with its own ByStage map.
func (s Stats) clone() Stats {
	s.ByStage = maps.Clone(s.ByStage)
	return s
}
