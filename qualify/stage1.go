package qualify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// stage1 runs a Stage 1 case as the React mode's select phase does: the
// prompt rendered from the case's messages, catalogue and connections for
// the output mode the model plans, the reply parsed and checked by
// prompts.ParseStage1, a rejection fed back at most MaxRetries times, a
// reply cut at the token limit asked again with a larger limit.
func (r *runner) stage1(ctx context.Context, c Prepared) CaseResult {
	res := CaseResult{ID: c.ID, Stage: c.Stage, Situation: c.Situation}
	reg := c.Catalogue
	conns := reg.Connections("")
	env := prompts.Stage1Env{Registry: reg, Messages: c.msgs, Connections: conns}
	output := r.opts.Prompts.Stage1Output(reg.Actions(), conns)
	var last prompts.Stage1Result
	var problems []string
	maxTokens := 0
	for attempt := 1; attempt <= 1+MaxRetries; attempt++ {
		if !r.take() {
			res.Stopped = "the run's --max-calls were spent"
			break
		}
		req := workflow.ModelRequest{
			Stage: workflow.StageOne, JSON: prompts.ObjectReply(workflow.StageOne), Output: &output, MaxTokens: maxTokens,
			CacheKey: cacheKey(c, workflow.StageOne), Facts: workflow.PromptFacts{Messages: c.msgs},
		}
		rendered, err := r.opts.Prompts.Stage1(prompts.Stage1Input{
			Messages: c.msgs, Actions: reg.Actions(), Connections: conns, Feedback: prompts.Feedback(problems),
			Output: templateOutput(workflow.PlannedOutput(r.opts.Model, req)),
		})
		if err != nil {
			res.Error = "rendering Stage 1: " + workflow.PublicMessage(err)
			break
		}
		req.Messages, req.CachePrefix = rendered.Messages, rendered.CachePrefix
		resp, err := r.generate(ctx, req, &res)
		if err != nil {
			res.Error = "the model could not answer: " + workflow.PublicMessage(err)
			last = prompts.Stage1Result{}
			break
		}
		call := &res.Calls[len(res.Calls)-1]
		if resp.Truncated {
			last, problems = prompts.Stage1Result{}, []string{workflow.TruncatedProblem(resp)}
			maxTokens = workflow.RetryMaxTokens(maxTokens, resp)
		} else {
			last = prompts.ParseStage1(resp.Text, env)
			problems = last.Problems
			classify1(call, resp.Text)
		}
		call.Problems = problems
		if len(problems) == 0 {
			res.AcceptedAt = attempt
			break
		}
	}
	score1(&res, c.Expect, last)
	return res
}

// cacheKey is the prompt cache key of a case's calls of stage: each case
// is its own workflow.
func cacheKey(c Prepared, stage workflow.Stage) string {
	return fmt.Sprintf("qualify-%s:%s", c.ID, stage)
}

// score1 checks the last Stage 1 reply against the expectations.
func score1(res *CaseResult, want Expect, last prompts.Stage1Result) {
	if last.Parsed == nil {
		return
	}
	sel := last.Selection
	res.Selection = &sel
	res.Action = sel.Action == want.Action
	res.References = sameSet(sel.RequiredInputDocuments, want.Documents) && sel.RequiredConnection == want.Connection
	asked := make([]string, len(sel.ParametersSchema.Fields))
	for i, f := range sel.ParametersSchema.Fields {
		asked[i] = f.Name
	}
	res.Fields = !slices.ContainsFunc(want.Fields, func(f string) bool { return !slices.Contains(asked, f) }) &&
		!slices.ContainsFunc(asked, func(f string) bool { return !slices.Contains(want.Fields, f) && !slices.Contains(want.MayAsk, f) })
	res.Carried = Carried(sel.ActionObjective+"\n"+sel.ParametersContext, want.Carries)
	res.Passed = res.AcceptedAt > 0 && res.Action && res.References && res.Fields && res.Carried
}

// Carried reports whether every fact is in text (a Stage 1 reply's
// objective and parametersContext), as grounding finds a Stage 2 value
// there (prompts.Ungrounded). A fact written as a plain number is checked
// as one, so a short figure ("31") must appear as a number, not merely
// pass as a short string.
func Carried(text string, facts []string) bool {
	if len(facts) == 0 {
		return true
	}
	values := map[string]any{}
	for i, f := range facts {
		var v any = f
		if _, err := strconv.ParseFloat(f, 64); err == nil {
			v = json.Number(f)
		}
		values[strconv.Itoa(i)] = v
	}
	return len(prompts.Ungrounded(values, prompts.Grounding{Context: text})) == 0
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
