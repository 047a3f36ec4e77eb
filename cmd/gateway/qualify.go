package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// exitError ends the process with code (main prints err when set).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// usageError is a refused command line: exit code 2, nothing run.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf("qualify: "+format, args...)}
}

// qualifyFlags are `gateway qualify`'s options (docs/qualify.md).
type qualifyFlags struct {
	models      wiring.QualifyModels
	asJSON      bool
	minScore    float64
	cases       string
	stage       string
	maxCalls    int
	concurrency int
}

func parseQualify(args []string) (qualifyFlags, error) {
	var f qualifyFlags
	fs := flag.NewFlagSet("qualify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.models.Stage1, "stage1", "", "Stage 1's model, provider/model")
	fs.StringVar(&f.models.Stage2, "stage2", "", "Stage 2's model, provider/model")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.Float64Var(&f.minScore, "min-score", -1, "exit 1 when a stage scores below this (0 to 1)")
	fs.StringVar(&f.cases, "cases", "", "a JSON Lines file of cases instead of the built-in suite")
	fs.StringVar(&f.stage, "stage", "", "run one stage only: stage1 or stage2")
	fs.IntVar(&f.maxCalls, "max-calls", 0, "the most model calls the run makes (0: what the suite needs at most)")
	fs.IntVar(&f.concurrency, "concurrency", qualify.DefaultConcurrency, "cases run at once")
	if err := fs.Parse(args); err != nil {
		return f, usageError("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return f, usageError("unexpected arguments %q", strings.Join(fs.Args(), " "))
	case f.minScore != -1 && (f.minScore < 0 || f.minScore > 1):
		return f, usageError("--min-score must be between 0 and 1, not %g", f.minScore)
	case f.maxCalls < 0 || f.concurrency < 1:
		return f, usageError("--max-calls must not be negative and --concurrency must be at least 1")
	case f.stage != "" && f.stage != string(workflow.StageOne) && f.stage != string(workflow.StageTwo):
		return f, usageError("--stage must be stage1 or stage2, not %q", f.stage)
	}
	for _, m := range []string{f.models.Stage1, f.models.Stage2} {
		if _, err := wiring.ParseModelRef(m); m != "" && err != nil {
			return f, usageError("%s", workflow.PublicMessage(err))
		}
	}
	return f, nil
}

// runQualify runs `gateway qualify`: exit 0 with the report, 1 when a
// stage scores below --min-score (or the run fails), 2 on a usage error.
func runQualify(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f, err := parseQualify(args)
	if err != nil {
		return err
	}
	suite, err := qualify.Builtin()
	if f.cases != "" {
		suite, err = qualify.ReadFile(f.cases)
	}
	if err != nil {
		return usageError("%v", err)
	}
	cfg, err := wiring.LoadConfig(getenv)
	if err != nil {
		return err
	}
	q, err := wiring.OpenQualifier(ctx, cfg, f.models)
	if err != nil {
		return err
	}
	defer q.Close() //nolint:errcheck // the process ends
	opts := q.Options
	opts.MaxCalls, opts.Concurrency = f.maxCalls, f.concurrency
	if f.stage != "" {
		opts.Stages = []workflow.Stage{workflow.Stage(f.stage)}
	}
	report, err := qualify.Run(ctx, suite, opts)
	if workflow.KindOf(err) == workflow.KindInvalid {
		return usageError("%s", workflow.PublicMessage(err))
	} else if err != nil {
		return err
	}
	if err := q.Print(stdout, report, f.asJSON); err != nil {
		return err
	}
	if f.minScore >= 0 && report.Score() < f.minScore {
		return &exitError{code: 1, err: errors.New(q.Redactor.String(fmt.Sprintf("qualify: score %.3f is below --min-score %g", report.Score(), f.minScore)))}
	}
	return nil
}
