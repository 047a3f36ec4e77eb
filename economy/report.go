// Package economy reports what a workflow's model calls cost against the
// plain tool-calling loop every agent framework ships (DESIGN §10.1): per
// step the tokens of Stage 1 and Stage 2, with the part a prompt cache
// served; the same steps as the plain loop would have sent them; and the
// ratio of the two in dollars or in equivalent tokens. The gateway's
// economy endpoint and the cost comparison of bench/ both use it, so the
// plain loop and the cache rule have one implementation.
package economy

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Step is one step's usage by stage. Stage2Skipped says the step made no
// Stage 2 call (nothing to fill, or Stage 1 failed).
type Step struct {
	Round         int
	Step          int
	Stage1        Tokens
	Stage2        Tokens
	Stage2Skipped bool
	// Discarded counts the step's early Stage 2 calls whose reply was not
	// used (DESIGN §11.2); their tokens are in Stage2.
	Discarded int
	// LatencyMs is the step's model time measured, not modelled: from the
	// start of its first call to the end of its last (Trace.StartedAtMs +
	// LatencyMs), an early Stage 2 overlapping its Stage 1.
	LatencyMs int64
}

// Cost is a usage and, when every call it sums has a price, its cost.
type Cost struct {
	Input  int
	Cached int
	Output int
	USD    *float64
}

// Tokens returns c's usage.
func (c Cost) Tokens() Tokens { return Tokens{Input: c.Input, Cached: c.Cached, Output: c.Output} }

// Report is the economy report of a workflow.
type Report struct {
	Steps []Step
	// Totals sums every kept call but the actions' own (ai.process): the
	// steps' stages and any plan, repair or compaction call.
	Totals Cost
	// PlainLoop is the same steps as the plain tool-calling loop (PlainLoop)
	// would have sent them, priced as the workflow's Stage 1 model.
	PlainLoop Cost
	// CostRatio is Totals ÷ PlainLoop in dollars when both have one, else
	// in EquivalentTokens; 0 when the plain loop costs nothing.
	CostRatio float64
}

// Input is what Compute reads.
type Input struct {
	// Traces are the workflow's traces, oldest first.
	Traces []workflow.Trace
	// Messages are the workflow's messages, in order.
	Messages []workflow.Message
	// Actions are the actions the plain loop offers as tools.
	Actions []workflow.ActionSpec
	// Prices prices the traces' models; nil has no money figures.
	Prices Prices
	// Count counts a text's tokens.
	Count func(string) int
	// DocumentText returns a document's text ("" when it has none).
	DocumentText func(workflow.Document) string
	// RequestText returns what a trace's call sent, in the order the
	// provider reads it, for the modelled cache; nil takes the trace's
	// prompt messages.
	RequestText func(workflow.Trace) string
}

// Compute builds the report. A step's usage is its traces': input and
// output as the provider reported them, and the cached part as the provider
// reported it when the trace's model reported any cache use in this
// workflow (a cachedTokens or cacheWriteTokens above 0), else as the cache
// rule models it (PrefixCache over the requests of the same stage). The
// plain loop's calls are those of PlainLoop at the report's steps, counted
// with Count and cached by the same rule.
func Compute(in Input) Report {
	calls := usages(in)
	out := Report{Totals: total(calls, in.Prices), Steps: bySteps(calls)}
	steps := map[[2]int]bool{}
	for _, s := range out.Steps {
		steps[[2]int{s.Round, s.Step}] = true
	}
	plainModel := ""
	for _, c := range calls {
		if c.trace.Stage == workflow.StageOne {
			plainModel = c.trace.Model
			break
		}
	}
	out.PlainLoop = plainCost(in, steps, in.Prices, plainModel)
	out.CostRatio = Ratio(out.Totals, out.PlainLoop)
	return out
}

// call is a traced model call and its usage.
type call struct {
	trace workflow.Trace
	usage Tokens
}

// usages returns every trace but the actions' own with its usage: the
// cached part as the provider reported it when the trace's model reported
// any cache use in the workflow, else modelled per stage.
func usages(in Input) []call {
	reported := map[string]bool{}
	for _, t := range in.Traces {
		if t.CachedTokens > 0 || t.CacheWriteTokens > 0 {
			reported[t.Model] = true
		}
	}
	caches := map[workflow.Stage]*PrefixCache{}
	var out []call
	for _, t := range in.Traces {
		if t.Stage == workflow.StageAction {
			continue
		}
		u := Tokens{Input: t.PromptTokens, Output: t.CompletionTokens}
		if reported[t.Model] {
			u.Cached = min(t.CachedTokens, t.PromptTokens)
		} else {
			if caches[t.Stage] == nil {
				caches[t.Stage] = NewPrefixCache(in.Count)
			}
			u.Cached = caches[t.Stage].Serve(requestText(in, t), t.PromptTokens)
		}
		out = append(out, call{t, u})
	}
	return out
}

// total sums the calls, with their cost when every call's model has a
// price.
func total(calls []call, prices Prices) Cost {
	var out Cost
	var usd float64
	priced := len(calls) > 0
	for _, c := range calls {
		out = addCost(out, c.usage)
		p, ok := prices[c.trace.Model]
		priced = priced && ok
		usd += p.USD(c.usage)
	}
	if priced {
		out.USD = &usd
	}
	return out
}

// bySteps sums the Stage 1 and Stage 2 calls by step, in order.
func bySteps(calls []call) []Step {
	type key struct{ round, step int }
	byStep := map[key]*Step{}
	out := []Step{}
	var order []key
	for _, c := range calls {
		t := c.trace
		if t.Stage != workflow.StageOne && t.Stage != workflow.StageTwo {
			continue
		}
		k := key{t.Round, t.Step}
		s := byStep[k]
		if s == nil {
			s = &Step{Round: t.Round, Step: t.Step, Stage2Skipped: true}
			byStep[k] = s
			order = append(order, k)
		}
		if t.Stage == workflow.StageOne {
			s.Stage1 = s.Stage1.Add(c.usage)
		} else {
			s.Stage2, s.Stage2Skipped = s.Stage2.Add(c.usage), false
		}
		if t.Discarded {
			s.Discarded++
		}
		s.LatencyMs = max(s.LatencyMs, t.StartedAtMs+t.LatencyMs)
	}
	for _, k := range order {
		out = append(out, *byStep[k])
	}
	slices.SortFunc(out, func(a, b Step) int {
		return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.Step, b.Step))
	})
	return out
}

// requestText is what t's call sent, for the modelled cache.
func requestText(in Input, t workflow.Trace) string {
	if in.RequestText != nil {
		return in.RequestText(t)
	}
	var b strings.Builder
	for _, m := range t.Prompt {
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

// addCost adds usage u to c's tokens.
func addCost(c Cost, u Tokens) Cost {
	c.Input, c.Cached, c.Output = c.Input+u.Input, c.Cached+u.Cached, c.Output+u.Output
	return c
}

// plainCost is the plain loop's usage at steps (every call of the loop
// passes through the cache, the earlier steps' too), priced as model.
func plainCost(in Input, steps map[[2]int]bool, prices Prices, model string) Cost {
	var out Cost
	cache := NewPrefixCache(in.Count)
	calls := 0
	for _, c := range PlainLoop(PlainInput{Actions: in.Actions, Messages: in.Messages, Count: in.Count, DocumentText: in.DocumentText}) {
		cached := cache.Serve(c.Request, c.Tokens)
		if !steps[[2]int{c.Round, c.Step}] {
			continue
		}
		calls++
		out = addCost(out, Tokens{Input: c.Tokens, Cached: cached, Output: in.Count(c.Output)})
	}
	if p, ok := prices[model]; ok && calls > 0 {
		usd := p.USD(out.Tokens())
		out.USD = &usd
	}
	return out
}

// Ratio is a ÷ b in dollars when both are priced, else in EquivalentTokens;
// 0 when b costs nothing.
func Ratio(a, b Cost) float64 {
	if a.USD != nil && b.USD != nil && *b.USD > 0 {
		return *a.USD / *b.USD
	}
	if d := EquivalentTokens(b.Tokens()); d > 0 {
		return EquivalentTokens(a.Tokens()) / d
	}
	return 0
}
