package qualify

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// WriteText writes the report for a person: per stage, the score, each
// column with its share, latency, tokens and cost, the situations, and
// one line per failed case saying what went wrong.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, s := range r.Stages {
		if i > 0 {
			b.WriteString("\n")
		}
		writeStage(&b, s)
		writeFailures(&b, s.Stage, r.Cases)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStage(b *strings.Builder, s StageReport) {
	name := map[workflow.Stage]string{workflow.StageOne: "Stage 1", workflow.StageTwo: "Stage 2"}[s.Stage]
	models := strings.Join(s.Models, ", ")
	if models == "" {
		models = "(no reply)"
	}
	fmt.Fprintf(b, "%s: %d cases, %s\n", name, s.Cases, models)
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	cases := func(label string, n int) { fmt.Fprintf(tw, "  %s\t%d / %d\t%s\n", label, n, s.Cases, pct(n, s.Cases)) }
	replies := func(label string, n int) { fmt.Fprintf(tw, "  %s\t%d / %d\t%s\n", label, n, s.Calls, pct(n, s.Calls)) }
	cases("passed (score)", s.Passed)
	fmt.Fprintf(tw, "  calls\t%d\t\n", s.Calls)
	cases("valid at the first try", s.ValidFirstTry)
	cases("valid after feedback", s.ValidAfterFeedback)
	replies("replies with no JSON object", s.InvalidJSON)
	replies("replies cut at the token limit", s.Truncated)
	if s.Stage == workflow.StageOne {
		replies(`replies with "parameters"`, s.ParametersKey)
		replies("replies with a forbidden field", s.Forbidden)
		cases("expected action chosen", s.Action)
		cases("references exact", s.References)
		cases("fields asked as expected", s.Fields)
		cases("facts carried for Stage 2", s.Carried)
	} else {
		replies("replies with a forbidden key", s.Forbidden)
		replies("replies valid against the schema", s.SchemaValid)
		cases("values equal to the expected", s.Values)
		cases("cases with ungrounded values", s.UngroundedCases)
		fmt.Fprintf(tw, "  ungrounded values\t%d\t\n", s.UngroundedValues)
	}
	if s.NotRun+s.Stopped+s.Errors > 0 {
		fmt.Fprintf(tw, "  not run / stopped / model errors\t%d / %d / %d\t\n", s.NotRun, s.Stopped, s.Errors)
	}
	fmt.Fprintf(tw, "  latency p50 / p95\t%d ms / %d ms\t\n", s.LatencyMs.P50, s.LatencyMs.P95)
	fmt.Fprintf(tw, "  tokens in / cached / out\t%d / %d / %d\t\n", s.Tokens.Input, s.Tokens.Cached, s.Tokens.Output)
	if s.USD != nil {
		fmt.Fprintf(tw, "  cost\t$%.4f\t\n", *s.USD)
	} else {
		fmt.Fprintf(tw, "  cost\t-\t(a model has no price in prices:)\n")
	}
	_ = tw.Flush()
	b.WriteString("  passed by situation:\n")
	tw = tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for _, sit := range s.Situations {
		fmt.Fprintf(tw, "    %s\t%d / %d\n", sit.Name, sit.Passed, sit.Cases)
	}
	_ = tw.Flush()
}

// pct is n of total as a percentage ("" when total is 0).
func pct(n, total int) string {
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(total))
}

// writeFailures lists the failed cases of stage, each with why it failed.
func writeFailures(b *strings.Builder, stage workflow.Stage, cases []CaseResult) {
	first := true
	for _, c := range cases {
		if c.Stage != stage || c.Passed {
			continue
		}
		if first {
			b.WriteString("  failed:\n")
			first = false
		}
		fmt.Fprintf(b, "    %s (%s): %s\n", c.ID, c.Situation, textclip.Excerpt(whyFailed(c), 300))
	}
}

// whyFailed says in one line why c did not pass.
func whyFailed(c CaseResult) string {
	var why []string
	switch {
	case c.Error != "":
		why = append(why, c.Error)
	case len(c.Calls) == 0:
		why = append(why, "not run: "+c.Stopped)
	case c.AcceptedAt == 0:
		last := c.Calls[len(c.Calls)-1]
		why = append(why, fmt.Sprintf("no reply accepted in %d tries (last: %s)", len(c.Calls), strings.Join(last.Problems, "; ")))
		if c.Stopped != "" {
			why = append(why, c.Stopped)
		}
	}
	if c.Stage == workflow.StageOne && c.Selection != nil {
		for _, x := range []struct {
			ok   bool
			what string
		}{{c.Action, "action " + c.Selection.Action}, {c.References, fmt.Sprintf("references %v, connection %q", c.Selection.RequiredInputDocuments, c.Selection.RequiredConnection)},
			{c.Fields, "fields asked differ"}, {c.Carried, "a fact Stage 2 needs is not carried"}} {
			if !x.ok {
				why = append(why, x.what)
			}
		}
	}
	if c.Stage == workflow.StageTwo && c.Parameters != nil {
		if !c.Values {
			why = append(why, fmt.Sprintf("values differ: %s", compactJSON(c.Parameters)))
		}
		if len(c.Ungrounded) > 0 {
			why = append(why, "ungrounded: "+strings.Join(c.Ungrounded, ", "))
		}
	}
	return strings.Join(why, "; ")
}
