package main

import (
	"context"
	"flag"

	"github.com/twostep/twostep/client"
)

// maxStepsLimit is the largest step limit the API takes (maxSteps,
// DESIGN §6).
const maxStepsLimit = 100

// cmdRun is "twostep run": start a workflow and follow its first round.
func cmdRun(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var files stringList
	fs.Var(&files, "file", "a document to upload (repeatable)")
	mode := fs.String("mode", "", "react (default) or actionplan")
	maxSteps := fs.Int("max-steps", 0, "step limit of each round (default: the gateway's)")
	wait := fs.Bool("wait", true, "wait for the round to end (false: print the workflow and return)")
	pos, err := parse(fs, args, "PROMPT")
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["max-steps"] && (*maxSteps < 1 || *maxSteps > maxStepsLimit) {
		return usagef("--max-steps must be between 1 and %d, not %d (leave it out for the gateway's default)", maxStepsLimit, *maxSteps)
	}
	if set["mode"] && *mode != "react" && *mode != "actionplan" {
		return usagef("--mode must be react or actionplan, not %q", *mode)
	}
	docs, err := uploads(files)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	res, err := c.Create(ctx, client.CreateRequest{Prompt: pos[0], Mode: *mode, MaxSteps: *maxSteps, Documents: docs})
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, 0, *wait)
}
