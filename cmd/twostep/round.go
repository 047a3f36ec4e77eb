package main

import (
	"context"

	"github.com/twostep/twostep/client"
)

// cmdRound is "twostep round": start (or queue) the next round of a
// workflow and follow it.
func cmdRound(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var files stringList
	fs.Var(&files, "file", "a document to upload (repeatable)")
	wait := fs.Bool("wait", true, "wait for the round to end (false: print the workflow and return)")
	onBusy := fs.String("on-busy", "", "while a round runs: reject (the default), enqueue (run after it) or interrupt (stop it at its next safe point and run next)")
	pos, err := parse(fs, args, "ID", "PROMPT")
	if err != nil {
		return err
	}
	docs, err := uploads(files)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	after, err := lastSeq(ctx, c, pos[0])
	if err != nil {
		return err
	}
	var res *client.Result
	if *onBusy != "" {
		res, err = c.QueueRound(ctx, pos[0], pos[1], *onBusy, docs...)
	} else {
		res, err = c.StartRound(ctx, pos[0], pos[1], 0, docs...)
	}
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, after, *wait)
}
