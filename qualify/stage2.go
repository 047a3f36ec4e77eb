package qualify

import (
	"context"
	"slices"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// stage2 runs a Stage 2 case as the React mode's parameterize phase does,
// with the case's Stage 1 selection held fixed: the prompt and the native
// output schema built from the selection and the action's schema, the
// reply (mapped back from a native mode) parsed and validated by
// Builder.ParseStage2, a rejection fed back at most MaxRetries times.
// Ungrounded values are counted, and rejected as Options.RequireGrounded
// says (the catalogue's declared effect deciding "write").
func (r *runner) stage2(ctx context.Context, c Prepared) CaseResult {
	res := CaseResult{ID: c.ID, Stage: c.Stage, Situation: c.Situation}
	reg := c.Catalogue
	sel := *c.Selection
	spec, _ := reg.Action(sel.Action) // Prepare checked it
	b := r.opts.Prompts
	in := prompts.Stage2Input{Selection: sel, Action: spec}
	out, err := b.Stage2Output(in)
	if err != nil {
		res.Error = "rendering Stage 2: " + workflow.PublicMessage(err)
		return res
	}
	grounding := prompts.Stage2Grounding(sel, spec)
	var last prompts.Stage2Result
	var problems []string
	maxTokens := 0
	for attempt := 1; attempt <= 1+MaxRetries; attempt++ {
		if !r.take() {
			res.Stopped = "the run's --max-calls were spent"
			break
		}
		req := workflow.ModelRequest{
			Stage: workflow.StageTwo, JSON: prompts.ObjectReply(workflow.StageTwo), Output: &out.Output, MaxTokens: maxTokens,
			CacheKey: cacheKey(c, workflow.StageTwo), Facts: workflow.PromptFacts{Selection: &sel},
		}
		in.Feedback, in.Output = prompts.Feedback(problems), templateOutput(workflow.PlannedOutput(r.opts.Model, req))
		rendered, err := b.Stage2(in)
		if err != nil {
			res.Error = "rendering Stage 2: " + workflow.PublicMessage(err)
			break
		}
		req.Messages, req.CachePrefix = rendered.Messages, rendered.CachePrefix
		resp, err := r.generate(ctx, req, &res)
		if err != nil {
			res.Error = "the model could not answer: " + workflow.PublicMessage(err)
			last = prompts.Stage2Result{}
			break
		}
		call := &res.Calls[len(res.Calls)-1]
		if resp.Truncated {
			last, problems = prompts.Stage2Result{}, []string{workflow.TruncatedProblem(resp)}
			maxTokens = workflow.RetryMaxTokens(maxTokens, resp)
		} else {
			reply := resp.Text
			if resp.OutputMode.Native() {
				reply = out.FromNative(reply)
			}
			last = b.ParseStage2(reply, spec, sel.ParametersSchema.Fields, reg)
			problems = last.Problems
			if u := prompts.Ungrounded(last.Parameters, grounding); len(u) > 0 && r.opts.RequireGrounded.Rejects(spec.Effect) {
				problems = append(problems, prompts.UngroundedProblems(u)...)
			}
			classify2(call, reply, last.Parameters, func(p map[string]any) bool { return len(reg.ValidateParameters(spec.Name, p)) == 0 })
		}
		call.Problems = problems
		if len(problems) == 0 {
			res.AcceptedAt = attempt
			break
		}
	}
	if last.Parameters != nil {
		res.Parameters = last.Parameters
		res.Ungrounded = prompts.Ungrounded(last.Parameters, grounding)
		res.Values = sameValues(last.Parameters, c.Expect)
	}
	res.Passed = res.AcceptedAt > 0 && res.Values && len(res.Ungrounded) == 0
	return res
}

// classify2 records what a Stage 2 reply carries: no JSON object, a
// forbidden key, parameters valid against the action's schema.
func classify2(c *Call, reply string, params map[string]any, valid func(map[string]any) bool) {
	_, err := prompts.ExtractObject(reply)
	c.InvalidJSON = err != nil
	c.Forbidden = len(workflow.ForbiddenKeyProblems(params)) > 0
	c.SchemaValid = params != nil && valid(params)
}

// sameValues reports whether params give every expected value (in one of
// its accepted forms) and none of the parameters that must be absent.
func sameValues(params map[string]any, want Expect) bool {
	for k, v := range want.Values {
		got, ok := params[k]
		if !ok || !(prompts.SameValue(got, v) || slices.ContainsFunc(want.Accepted[k], func(a any) bool { return prompts.SameValue(got, a) })) {
			return false
		}
	}
	for _, k := range want.Absent {
		if _, ok := params[k]; ok {
			return false
		}
	}
	return true
}
