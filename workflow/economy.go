package workflow

import (
	"encoding/json"
	"slices"
)

// EconomyStep is one step's prompt tokens: what Stage 1 and Stage 2 sent
// (every attempt, retries included) and what the naive single-prompt
// ReAct agent would have sent for the same step (NaiveTokens).
type EconomyStep struct {
	Round        int `json:"round"`
	Step         int `json:"step"`
	Stage1Tokens int `json:"stage1Tokens" doc:"Prompt tokens of the step's Stage 1 calls, retries included"`
	Stage2Tokens int `json:"stage2Tokens" doc:"Prompt tokens of the step's Stage 2 calls, retries included"`
	NaiveTokens  int `json:"naiveTokens" doc:"Prompt tokens the naive single-prompt ReAct agent would send at this step"`
}

// EconomyTotals sums the steps; PromptTokens adds the prompt tokens of
// every other model call (plan, repair, action) on top.
type EconomyTotals struct {
	Stage1Tokens int `json:"stage1Tokens"`
	Stage2Tokens int `json:"stage2Tokens"`
	PromptTokens int `json:"promptTokens" doc:"Prompt tokens of every kept call: Stage 1, Stage 2, plan, repair, action"`
}

// Economy is the prompt-economy report of a workflow (DESIGN §9.5).
type Economy struct {
	Steps  []EconomyStep `json:"steps" nullable:"false" doc:"The steps with a Stage 1 or Stage 2 trace, in order"`
	Totals EconomyTotals `json:"totals"`
	// NaiveReactEstimate is the sum of the steps' NaiveTokens.
	NaiveReactEstimate int `json:"naiveReactEstimate" doc:"Sum of the steps' naiveTokens"`
	// Ratio is (Stage1Tokens + Stage2Tokens) / NaiveReactEstimate: the
	// share of the naive agent's prompt tokens the two stages spent (0
	// when the estimate is 0).
	Ratio float64 `json:"ratio" doc:"(stage1Tokens + stage2Tokens) / naiveReactEstimate; 0 without an estimate"`
}

// EconomyInput is what ComputeEconomy reads: the workflow's traces and
// messages, a token counter and the extracted text of a document.
type EconomyInput struct {
	Traces   []Trace
	Messages []Message
	// Count counts the tokens of a text (the gateway uses the tokenizer
	// llm estimates usage with).
	Count func(string) int
	// DocumentText returns a document's text as document.extract extracts
	// it ("" when it has none).
	DocumentText func(Document) string
}

// ComputeEconomy builds the report. Steps are the (round, step) pairs with
// a Stage 1 or Stage 2 trace, in order; their tokens are the traces'
// promptTokens.
//
// The naive estimate models one ReAct agent with a single prompt that
// resends the whole transcript at every step, one call per step (no
// retries). Its prompt at step s of round r is, in tokens:
//
//   - base(r): what any agent sends first — instructions, the action
//     catalogue, the user prompt, the documents index — taken as the
//     prompt tokens of round r's first Stage 1 call (the lowest step,
//     first attempt); plus, counted with Count:
//   - the extracted text of every document attached to a message before
//     the step (the uploads of rounds up to r, the outputs of earlier
//     actions), once each;
//   - for every earlier action message (any round):
//     "Thought: {actionObjective}\nAction: {action} {parameters as JSON}\nObservation: {text}";
//   - the text of the user and assistant messages of earlier rounds.
//
// Stage 1 instead shows the documents only as an index and earlier steps
// as budgeted summaries, and Stage 2 sees neither.
func ComputeEconomy(in EconomyInput) Economy {
	type key struct{ round, step int }
	byStep := map[key]*EconomyStep{}
	var order []key
	out := Economy{Steps: []EconomyStep{}}
	for _, t := range in.Traces {
		out.Totals.PromptTokens += t.PromptTokens
		if t.Stage != StageOne && t.Stage != StageTwo {
			continue
		}
		k := key{t.Round, t.Step}
		s := byStep[k]
		if s == nil {
			s = &EconomyStep{Round: t.Round, Step: t.Step}
			byStep[k] = s
			order = append(order, k)
		}
		if t.Stage == StageOne {
			s.Stage1Tokens += t.PromptTokens
		} else {
			s.Stage2Tokens += t.PromptTokens
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		if a.round != b.round {
			return a.round - b.round
		}
		return a.step - b.step
	})
	base := map[int]Trace{}
	for _, t := range in.Traces {
		if b, ok := base[t.Round]; t.Stage == StageOne && (!ok || t.Step < b.Step || (t.Step == b.Step && t.Attempt < b.Attempt)) {
			base[t.Round] = t
		}
	}
	for _, k := range order {
		s := byStep[k]
		s.NaiveTokens = base[k.round].PromptTokens + naiveTranscript(in, k.round, k.step)
		out.Steps = append(out.Steps, *s)
		out.Totals.Stage1Tokens += s.Stage1Tokens
		out.Totals.Stage2Tokens += s.Stage2Tokens
		out.NaiveReactEstimate += s.NaiveTokens
	}
	if out.NaiveReactEstimate > 0 {
		out.Ratio = float64(out.Totals.Stage1Tokens+out.Totals.Stage2Tokens) / float64(out.NaiveReactEstimate)
	}
	return out
}

// naiveTranscript counts what the naive agent's prompt at step of round
// adds to the round's base (see ComputeEconomy).
func naiveTranscript(in EconomyInput, round, step int) int {
	n := 0
	for _, m := range in.Messages {
		switch {
		case m.Round < round:
			n += in.Count(naiveRecord(m))
		case m.Round > round:
			continue
		case m.Role == RoleAction && m.Step < step:
			n += in.Count(naiveRecord(m))
		case m.Role != RoleUser: // this round's prompt is in the base; its documents are not
			continue
		}
		for _, d := range m.Documents {
			if in.DocumentText != nil {
				n += in.Count(in.DocumentText(d))
			}
		}
	}
	return n
}

// naiveRecord is a message as the naive agent's transcript shows it.
func naiveRecord(m Message) string {
	if m.Role != RoleAction {
		return m.Text
	}
	params, _ := json.Marshal(m.Parameters)
	return "Thought: " + m.ActionObjective + "\nAction: " + m.Action + " " + string(params) + "\nObservation: " + m.Text
}
