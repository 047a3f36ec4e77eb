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
}

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

// CostTable prints the rows as the table, then Stage 1's size and
// cache share.
func CostTable(rows []CostRow) string {
	var b strings.Builder
	b.WriteString("| workload | two stages: in / cached / out | plain loop: in / cached / out | cost ratio | cost ratio, Stage 2 at a tenth | latency ratio |\n")
	b.WriteString("|---|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f× | %.2f× | %.2f× |\n", r.Name, usage(r.Same.Totals.Tokens()), usage(r.Same.PlainLoop.Tokens()),
			r.Same.CostRatio, r.Small.CostRatio, r.LatencyRatio())
	}
	b.WriteString("\n| workload | model calls: two stages / plain loop | steps without Stage 2 | Stage 1 prompt: step 1 → step N | Stage 1 input cached from step 3 on | $ two stages / plain loop |\n")
	b.WriteString("|---|---|---:|---|---:|---|\n")
	for _, r := range rows {
		growth := 0.0
		if r.Stage1First > 0 {
			growth = float64(r.Stage1Last) / float64(r.Stage1First)
		}
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %s → %s (step %d, %.2f×) | %.0f %% | %s / %s |\n", r.Name, r.TwoStageCalls, r.PlainCalls,
			r.Stage2Skipped, thousands(r.Stage1First), thousands(r.Stage1Last), r.LastStep, growth, 100*r.Stage1Cached,
			dollars(r.Same.Totals.USD), dollars(r.Same.PlainLoop.USD))
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
