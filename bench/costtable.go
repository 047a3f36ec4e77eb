package bench

import (
	"fmt"
	"strings"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/workflow"
)

// The latency model of the comparison, per call: a fixed 0.4 s, plus the
// uncached input at 5,000 tokens/s, the cached input at 50,000 tokens/s
// and the output at 60 tokens/s; a step's two stages run in sequence.
const (
	latencyPerCall   = 0.4
	uncachedPerSec   = 5000
	cachedPerSec     = 50000
	outputPerSec     = 60
	stage1SizeAtStep = 30
	cachedFromStep   = 3
)

// Latency is the modelled time in seconds of calls calls whose usage sums
// to t (the model is linear in the tokens, so sums suffice).
func Latency(calls int, t economy.Tokens) float64 {
	return latencyPerCall*float64(calls) + float64(t.Input-t.Cached)/uncachedPerSec +
		float64(t.Cached)/cachedPerSec + float64(t.Output)/outputPerSec
}

// CostRow is one workload's line of the comparison.
type CostRow struct {
	Name string
	// Same prices both stages as the model; Small prices Stage 2 at a
	// tenth of it.
	Same, Small economy.Report
	// TwoStageCalls counts the two stages' calls (and any compaction);
	// PlainCalls the plain loop's, one a step.
	TwoStageCalls, PlainCalls int
	// Stage2Skipped counts the steps without a Stage 2 call.
	Stage2Skipped int
	// Stage1First and Stage1Last are Stage 1's prompt tokens at step 1
	// and at step LastStep (step 30, or the last step before it).
	Stage1First, Stage1Last, LastStep int
	// Stage1Cached is the share of Stage 1's input tokens served from
	// the cache from step 3 on.
	Stage1Cached float64
	// Shown and Needed are CostRun's: the references and facts Stage 1's
	// replies found in their prompts, and those they needed.
	Shown, Needed int
	// Stages is where the two stages' tokens go: Stage 1, Stage 2 and
	// everything else (history compaction), with the same-model prices.
	Stages []StageCost
	// Measured is the latency measured with a model streaming at the
	// latency model's pace (latency.go); zero when not measured.
	Measured MeasuredLatency
}

// StageCost is one stage's share of a run: its calls and their usage.
type StageCost struct {
	Stage  string
	Calls  int
	Tokens economy.Tokens
}

// Equivalent is the stage's cost in equivalent tokens (uncached input +
// 0.1 × cached + 5 × output: the prices' proportions).
func (s StageCost) Equivalent() float64 { return economy.EquivalentTokens(s.Tokens) }

// LatencyRatio is the two stages' modelled time ÷ the plain loop's.
func (r CostRow) LatencyRatio() float64 {
	plain := Latency(r.PlainCalls, r.Same.PlainLoop.Tokens())
	if plain == 0 {
		return 0
	}
	return Latency(r.TwoStageCalls, r.Same.Totals.Tokens()) / plain
}

// MeasureCost turns a run into its line of the comparison.
func MeasureCost(run *CostRun) CostRow {
	row := CostRow{Name: run.Workload.Name, Same: run.Report(costModelName, costModelName), Small: run.Report(costModelName, costSmallName)}
	for _, t := range run.Traces {
		if t.Stage != workflow.StageAction {
			row.TwoStageCalls++
		}
	}
	row.PlainCalls = len(row.Same.Steps)
	row.Shown, row.Needed = run.Shown, run.Needed
	row.Stages = stageCosts(run.Traces, row.Same)
	var in, cached int
	for _, s := range row.Same.Steps {
		if s.Stage2Skipped {
			row.Stage2Skipped++
		}
		if s.Step == 1 {
			row.Stage1First = s.Stage1.Input
		}
		if s.Step <= stage1SizeAtStep && s.Step > row.LastStep {
			row.Stage1Last, row.LastStep = s.Stage1.Input, s.Step
		}
		if s.Step >= cachedFromStep {
			in, cached = in+s.Stage1.Input, cached+s.Stage1.Cached
		}
	}
	if in > 0 {
		row.Stage1Cached = float64(cached) / float64(in)
	}
	return row
}

// stageCosts splits a report's totals by stage: Stage 1 and Stage 2 from
// its steps, the rest (compaction) as what the totals hold beyond them.
func stageCosts(traces []workflow.Trace, rep economy.Report) []StageCost {
	s1 := StageCost{Stage: "Stage 1"}
	s2 := StageCost{Stage: "Stage 2"}
	other := StageCost{Stage: "compaction"}
	for _, t := range traces {
		switch t.Stage {
		case workflow.StageOne:
			s1.Calls++
		case workflow.StageTwo:
			s2.Calls++
		case workflow.StageAction:
		default:
			other.Calls++
		}
	}
	for _, st := range rep.Steps {
		s1.Tokens, s2.Tokens = s1.Tokens.Add(st.Stage1), s2.Tokens.Add(st.Stage2)
	}
	all := rep.Totals.Tokens()
	other.Tokens = economy.Tokens{Input: all.Input - s1.Tokens.Input - s2.Tokens.Input,
		Cached: all.Cached - s1.Tokens.Cached - s2.Tokens.Cached, Output: all.Output - s1.Tokens.Output - s2.Tokens.Output}
	return []StageCost{s1, s2, other}
}

// CostTable prints the rows as the table, then Stage 1's size and
// cache share.
func CostTable(rows []CostRow) string {
	var b strings.Builder
	b.WriteString("| workload | two stages: in / cached / out | plain loop: in / cached / out | cost ratio | cost ratio, Stage 2 at a tenth | latency ratio, modelled in sequence | latency ratio, measured | measured, Stage 2 twice as fast | Stage 2 started early / discarded |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %d / %d of %d steps |\n", r.Name, usage(r.Same.Totals.Tokens()), usage(r.Same.PlainLoop.Tokens()),
			r.Same.CostRatio, r.Small.CostRatio, r.LatencyRatio(), r.Measured.Ratio, r.Measured.RatioFastStage2, r.Measured.Early, r.Measured.Discarded, r.Measured.Steps)
	}
	b.WriteString("\n| workload | model calls: two stages / plain loop | steps without Stage 2 | Stage 1 prompt: step 1 → step N | Stage 1 input cached from step 3 on | $ two stages / plain loop | references and facts shown / needed |\n")
	b.WriteString("|---|---|---:|---|---:|---|---:|\n")
	for _, r := range rows {
		growth := 0.0
		if r.Stage1First > 0 {
			growth = float64(r.Stage1Last) / float64(r.Stage1First)
		}
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %s → %s (step %d, %.2f×) | %.0f %% | %s / %s | %d / %d |\n", r.Name, r.TwoStageCalls, r.PlainCalls,
			r.Stage2Skipped, thousands(r.Stage1First), thousands(r.Stage1Last), r.LastStep, growth, 100*r.Stage1Cached,
			dollars(r.Same.Totals.USD), dollars(r.Same.PlainLoop.USD), r.Shown, r.Needed)
	}
	b.WriteString("\n| workload | stage | calls | uncached in | cached in | out | equivalent tokens | share |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		var all float64
		for _, s := range r.Stages {
			all += s.Equivalent()
		}
		for _, s := range r.Stages {
			share := 0.0
			if all > 0 {
				share = 100 * s.Equivalent() / all
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %.0f %% |\n", r.Name, s.Stage, s.Calls, thousands(s.Tokens.Input-s.Tokens.Cached),
				thousands(s.Tokens.Cached), thousands(s.Tokens.Output), thousands(int(s.Equivalent()+0.5)), share)
		}
		plain := r.Same.PlainLoop.Tokens()
		fmt.Fprintf(&b, "| %s | plain loop | %d | %s | %s | %s | %s | |\n", r.Name, r.PlainCalls, thousands(plain.Input-plain.Cached),
			thousands(plain.Cached), thousands(plain.Output), thousands(int(economy.EquivalentTokens(plain)+0.5)))
	}
	return b.String()
}

func usage(t economy.Tokens) string {
	return thousands(t.Input) + " / " + thousands(t.Cached) + " / " + thousands(t.Output)
}

func dollars(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("$%.4f", *v)
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
