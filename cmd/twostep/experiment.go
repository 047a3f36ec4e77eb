package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twostep/twostep/client"
)

// experimentPoll is how often a running experiment is read.
const experimentPoll = 500 * time.Millisecond

// cmdExperiment starts an experiment (an admin token), waits for it, prints
// its table and fails (exit 1) when the share of calls that agree in all
// falls below --min-agreement, or the experiment did not complete: a
// template or model change gated in CI.
func cmdExperiment(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	stage := fs.String("stage", "", "stage1 or stage2 (required)")
	var workflows, tmpls stringList
	fs.Var(&workflows, "workflow", "a workflow whose calls to re-run (repeatable; default: every workflow)")
	fs.Var(&tmpls, "template", "NAME=FILE: a template override, e.g. stage2=./stage2.tmpl (repeatable)")
	since := fs.String("since", "", "only calls recorded since this time (RFC 3339) or duration ago (e.g. 24h)")
	action := fs.String("action", "", "only calls of steps that selected this action")
	model := fs.String("model", "", "PROVIDER/MODEL to re-run the calls on (default: the gateway's)")
	minAgreement := fs.Float64("min-agreement", 0, "fail (exit 1) when fewer calls than this share (0 to 1) agree")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up waiting after this long (the experiment is stopped)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	req, err := experimentRequest(*stage, workflows, tmpls, *since, *action, *model)
	if err != nil {
		return err
	}
	if *minAgreement < 0 || *minAgreement > 1 {
		return usagef("--min-agreement must be between 0 and 1, not %g", *minAgreement)
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	id, err := c.StartExperiment(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "experiment %s started\n", id)
	e, err := waitExperiment(ctx, c, id, *timeout)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(e); err != nil {
			return err
		}
	} else {
		printExperiment(a, e)
	}
	return gate(e, *minAgreement)
}

// experimentRequest builds the request from the flags, reading the
// template files; every mistake is a usage error.
func experimentRequest(stage string, workflows, tmpls []string, since, action, model string) (client.ExperimentRequest, error) {
	req := client.ExperimentRequest{Stage: stage, Workflows: workflows}
	if stage != "stage1" && stage != "stage2" {
		return req, usagef("--stage must be stage1 or stage2, not %q", stage)
	}
	if since != "" || action != "" {
		if len(workflows) > 0 {
			return req, usagef("give --workflow or --since/--action, not both")
		}
		req.Filter = &client.ExperimentFilter{Action: action}
		if since != "" {
			t, err := sinceTime(since)
			if err != nil {
				return req, err
			}
			req.Filter.Since = t
		}
	}
	o := &client.ExperimentOverride{}
	for _, t := range tmpls {
		name, file, ok := strings.Cut(t, "=")
		if !ok || name == "" || file == "" {
			return req, usagef("--template wants NAME=FILE, not %q", t)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return req, usagef("--template %s: %v", t, err)
		}
		if o.Templates == nil {
			o.Templates = map[string]string{}
		}
		o.Templates[name] = string(b)
	}
	if model != "" {
		provider, m, ok := strings.Cut(model, "/")
		if !ok || provider == "" || m == "" {
			return req, usagef("--model wants PROVIDER/MODEL, not %q", model)
		}
		o.Model = &client.ModelRef{Provider: provider, Model: m}
	}
	if o.Templates != nil || o.Model != nil {
		req.Override = o
	}
	return req, nil
}

// sinceTime reads --since: an RFC 3339 time or a duration before now.
func sinceTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, usagef("--since wants an RFC 3339 time or a duration such as 24h, not %q", s)
}

// waitExperiment polls until the experiment is no longer running; past
// timeout (or when ctx ends) it stops the experiment and says so.
func waitExperiment(ctx context.Context, c *client.Client, id string, timeout time.Duration) (*client.Experiment, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(experimentPoll)
	defer t.Stop()
	for {
		e, err := c.Experiment(wctx, id)
		if err == nil && e.Status != "running" {
			return e, nil
		}
		if err != nil && wctx.Err() == nil {
			return nil, err
		}
		select {
		case <-wctx.Done():
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer scancel()
			_, _ = c.StopExperiment(sctx, id)
			return nil, fmt.Errorf("experiment %s did not finish in %s; asked it to stop", id, timeout)
		case <-t.C:
		}
	}
}

// printExperiment writes the table: one row per call, with the recorded
// and new results of every call that disagrees, then the totals.
func printExperiment(a *app, e *client.Experiment) {
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKFLOW\tROUND\tSTEP\tAGREES\tDETAIL\tTOKENS")
	for _, c := range e.Calls {
		agrees := "yes"
		if !c.Agreement.All {
			agrees = "NO"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%d\n", c.WorkflowID, c.Round, c.Step, agrees, detail(c), c.Tokens)
	}
	_ = w.Flush()
	for _, c := range e.Calls {
		if c.Agreement.All {
			continue
		}
		fmt.Fprintf(a.stdout, "\n%s round %d step %d (trace %s)\n", c.WorkflowID, c.Round, c.Step, c.TraceID)
		if c.Error != "" {
			fmt.Fprintf(a.stdout, "  error:    %s\n", c.Error)
		}
		fmt.Fprintf(a.stdout, "  recorded: %s\n  new:      %s\n", c.Recorded, c.Result)
	}
	usd := ""
	if e.Totals.USD != nil {
		usd = fmt.Sprintf(", $%.4f", *e.Totals.USD)
	}
	fmt.Fprintf(a.stdout, "\nexperiment %s %s: %d of %d calls agree (%s), %d tokens%s\n",
		e.ID, e.Status, e.Totals.Agreed, e.Totals.Calls, percent(e.Totals), e.Totals.Tokens, usd)
}

// detail names what a call agrees on: action, references and fields for
// Stage 1, each parameter for Stage 2 (a disagreement marked with !).
func detail(c client.ExperimentCall) string {
	if c.Error != "" {
		return "error"
	}
	var parts []string
	mark := func(name string, ok bool) {
		if !ok {
			name = "!" + name
		}
		parts = append(parts, name)
	}
	for _, d := range []struct {
		name string
		ok   *bool
	}{{"action", c.Agreement.Action}, {"references", c.Agreement.References}, {"fields", c.Agreement.Fields}} {
		if d.ok != nil {
			mark(d.name, *d.ok)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Agreement.Parameters)) {
		mark(k, c.Agreement.Parameters[k])
	}
	return strings.Join(parts, " ")
}

func percent(t client.ExperimentTotals) string {
	if t.Calls == 0 {
		return "no calls"
	}
	return strconv.FormatFloat(100*float64(t.Agreed)/float64(t.Calls), 'f', 1, 64) + "%"
}

// gate fails an experiment that did not complete, that matched no call
// while a minimum is asked for, or whose agreement is below min.
func gate(e *client.Experiment, minShare float64) error {
	switch {
	case e.Status != "completed":
		return fmt.Errorf("experiment %s %s: %s", e.ID, e.Status, e.Error)
	case e.Totals.Calls == 0 && minShare > 0:
		return fmt.Errorf("experiment %s matched no recorded call: nothing to gate on", e.ID)
	case e.Totals.Calls > 0 && float64(e.Totals.Agreed) < minShare*float64(e.Totals.Calls):
		return fmt.Errorf("agreement %s is below --min-agreement %g", percent(e.Totals), minShare)
	}
	return nil
}
