package qualify

import (
	"cmp"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// Report is a run's outcome: one StageReport per stage run, and every
// case's result.
type Report struct {
	Stages []StageReport `json:"stages"`
	// MaxCalls is the run's bound on model calls.
	MaxCalls int          `json:"maxCalls"`
	Cases    []CaseResult `json:"cases"`
}

// StageReport sums one stage's cases. Counts of cases are out of Cases;
// counts of replies (InvalidJSON, Truncated, ParametersKey, Forbidden,
// SchemaValid) are out of Calls.
type StageReport struct {
	Stage  workflow.Stage `json:"stage"`
	Models []string       `json:"models"`
	Cases  int            `json:"cases"`
	Passed int            `json:"passed"`
	// Score is Passed / Cases: a case not run, or stopped, does not pass.
	Score float64 `json:"score"`
	Calls int     `json:"calls"`
	// ValidFirstTry and ValidAfterFeedback are the cases whose first reply
	// was accepted, and those accepted only at a retry; NotRun the cases
	// that made no call, Stopped those the run's --max-calls cut short,
	// Errors those whose model could not answer.
	ValidFirstTry      int `json:"validFirstTry"`
	ValidAfterFeedback int `json:"validAfterFeedback"`
	NotRun             int `json:"notRun"`
	Stopped            int `json:"stopped"`
	Errors             int `json:"errors"`
	InvalidJSON        int `json:"invalidJSON"`
	Truncated          int `json:"truncated"`
	Forbidden          int `json:"forbidden"`
	// Stage 1: replies with a parameters key; cases whose last reply chose
	// the expected action, gave exactly the expected references, asked the
	// expected fields, carried the expected facts.
	ParametersKey int `json:"parametersKey,omitempty"`
	Action        int `json:"action,omitempty"`
	References    int `json:"references,omitempty"`
	Fields        int `json:"fields,omitempty"`
	Carried       int `json:"carried,omitempty"`
	// Stage 2: replies valid against the action's schema; cases whose
	// last reply gave the expected values; cases with an ungrounded
	// value, and the ungrounded values of all cases.
	SchemaValid      int `json:"schemaValid,omitempty"`
	Values           int `json:"values,omitempty"`
	UngroundedCases  int `json:"ungroundedCases,omitempty"`
	UngroundedValues int `json:"ungroundedValues,omitempty"`
	// LatencyMs are the calls' p50 and p95 (nearest rank).
	LatencyMs Latency `json:"latencyMs"`
	Tokens    Tokens  `json:"tokens"`
	// USD is the calls' cost at the prices: table; absent when a call's
	// model has no price.
	USD *float64 `json:"usd,omitempty"`
	// Situations counts cases and passes by situation.
	Situations []Situation `json:"situations"`
}

// Latency is a stage's call latencies.
type Latency struct {
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
}

// Situation is the cases of one situation and how many passed.
type Situation struct {
	Name   string `json:"name"`
	Cases  int    `json:"cases"`
	Passed int    `json:"passed"`
}

// Score is the lowest score of the stages run (0 with none).
func (r Report) Score() float64 {
	if len(r.Stages) == 0 {
		return 0
	}
	s := r.Stages[0].Score
	for _, st := range r.Stages[1:] {
		s = min(s, st.Score)
	}
	return s
}

// Unanswered returns the first model error of a run in which the model
// answered no call ("" when it answered one, or made none).
func (r Report) Unanswered() string {
	first := ""
	for _, c := range r.Cases {
		for _, call := range c.Calls {
			if call.Error == "" {
				return ""
			}
			if first == "" {
				first = call.Error
			}
		}
	}
	return first
}

func newReport(stages []workflow.Stage, results []CaseResult, maxCalls int) Report {
	r := Report{MaxCalls: maxCalls, Cases: results}
	for _, st := range stages {
		r.Stages = append(r.Stages, stageReport(st, results))
	}
	return r
}

func stageReport(st workflow.Stage, results []CaseResult) StageReport {
	s := StageReport{Stage: st, Models: []string{}, Situations: []Situation{}}
	var latencies []int64
	usd, priced := 0.0, true
	for _, c := range results {
		if c.Stage != st {
			continue
		}
		s.add(c)
		s.addSituation(c)
		for _, call := range c.Calls {
			s.addCall(call)
			latencies = append(latencies, call.LatencyMs)
			if call.USD == nil {
				priced = false
			} else {
				usd += *call.USD
			}
		}
	}
	if s.Cases > 0 {
		s.Score = float64(s.Passed) / float64(s.Cases)
	}
	if priced && s.Calls > 0 {
		s.USD = &usd
	}
	slices.Sort(latencies)
	s.LatencyMs = Latency{P50: percentile(latencies, 50), P95: percentile(latencies, 95)}
	slices.Sort(s.Models)
	return s
}

// add counts one case.
func (s *StageReport) add(c CaseResult) {
	s.Cases++
	count := func(n *int, ok bool) {
		if ok {
			*n++
		}
	}
	count(&s.Passed, c.Passed)
	count(&s.ValidFirstTry, c.AcceptedAt == 1)
	count(&s.ValidAfterFeedback, c.AcceptedAt > 1)
	count(&s.NotRun, len(c.Calls) == 0)
	count(&s.Stopped, c.Stopped != "" && len(c.Calls) > 0)
	count(&s.Errors, c.Error != "")
	count(&s.Action, c.Action)
	count(&s.References, c.References)
	count(&s.Fields, c.Fields)
	count(&s.Carried, c.Carried)
	count(&s.Values, c.Values)
	count(&s.UngroundedCases, len(c.Ungrounded) > 0)
	s.UngroundedValues += len(c.Ungrounded)
}

// addCall counts one call.
func (s *StageReport) addCall(c Call) {
	s.Calls++
	count := func(n *int, ok bool) {
		if ok {
			*n++
		}
	}
	count(&s.InvalidJSON, c.InvalidJSON)
	count(&s.Truncated, c.Truncated)
	count(&s.ParametersKey, c.ParametersKey)
	count(&s.Forbidden, c.Forbidden)
	count(&s.SchemaValid, c.SchemaValid)
	s.Tokens = Tokens{Input: s.Tokens.Input + c.Tokens.Input, Cached: s.Tokens.Cached + c.Tokens.Cached, Output: s.Tokens.Output + c.Tokens.Output}
	if c.Model != "" && !slices.Contains(s.Models, c.Model) {
		s.Models = append(s.Models, c.Model)
	}
}

func (s *StageReport) addSituation(c CaseResult) {
	i := slices.IndexFunc(s.Situations, func(x Situation) bool { return x.Name == c.Situation })
	if i < 0 {
		s.Situations = append(s.Situations, Situation{Name: c.Situation})
		i = len(s.Situations) - 1
		defer slices.SortFunc(s.Situations, func(a, b Situation) int { return cmp.Compare(a.Name, b.Name) })
	}
	s.Situations[i].Cases++
	if c.Passed {
		s.Situations[i].Passed++
	}
}

// percentile is the nearest-rank p-th percentile of sorted (0 when empty).
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
