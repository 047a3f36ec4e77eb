package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// exitError ends the process with code (main prints the error).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// usageError is a refused command line: exit code 2, nothing run.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf("qualify: "+format, args...)}
}

// parseQualify reads `gateway qualify`'s flags (docs/qualify.md) and the
// minimum score (-1: none).
func parseQualify(args []string) (wiring.QualifyRequest, float64, error) {
	var req wiring.QualifyRequest
	var stage string
	fs := flag.NewFlagSet("qualify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&req.Stage1, "stage1", "", "Stage 1's model, provider/model")
	fs.StringVar(&req.Stage2, "stage2", "", "Stage 2's model, provider/model")
	fs.BoolVar(&req.JSON, "json", false, "print the report as JSON")
	minScore := fs.Float64("min-score", -1, "exit 1 when a stage scores below this (0 to 1)")
	fs.StringVar(&req.Cases, "cases", "", "a JSON Lines file of cases instead of the built-in suite")
	fs.StringVar(&stage, "stage", "", "run one stage only: stage1 or stage2")
	fs.IntVar(&req.MaxCalls, "max-calls", 0, "the most model calls the run makes (0: what the suite needs at most)")
	fs.IntVar(&req.Concurrency, "concurrency", qualify.DefaultConcurrency, "cases run at once")
	if err := fs.Parse(args); err != nil {
		return req, 0, usageError("%v", err)
	}
	req.Stage = workflow.Stage(stage)
	switch {
	case fs.NArg() > 0:
		return req, 0, usageError("unexpected arguments %q", strings.Join(fs.Args(), " "))
	case *minScore != -1 && (*minScore < 0 || *minScore > 1):
		return req, 0, usageError("--min-score must be between 0 and 1, not %g", *minScore)
	case req.MaxCalls < 0 || req.Concurrency < 1:
		return req, 0, usageError("--max-calls must not be negative and --concurrency must be at least 1")
	case stage != "" && req.Stage != workflow.StageOne && req.Stage != workflow.StageTwo:
		return req, 0, usageError("--stage must be stage1 or stage2, not %q", stage)
	}
	return req, *minScore, nil
}

// runQualify runs `gateway qualify`: exit 0 with the report, 1 when a
// stage scores below --min-score (or the run fails), 2 on a usage error.
func runQualify(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	req, minScore, err := parseQualify(args)
	if err != nil {
		return err
	}
	cfg, err := wiring.LoadConfig(getenv)
	if err != nil {
		return err
	}
	report, err := wiring.Qualify(ctx, cfg, req, stdout)
	switch {
	case workflow.KindOf(err) == workflow.KindInvalid:
		return usageError("%v", err)
	case err != nil:
		return err
	case minScore >= 0 && report.Score() < minScore:
		return &exitError{code: 1, err: fmt.Errorf("qualify: score %.3f is below --min-score %g", report.Score(), minScore)}
	}
	return nil
}
