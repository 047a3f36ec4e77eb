package main

import (
	"context"
	"encoding/json"

	"github.com/twostep/twostep/client"
)

// cmdDecide is "twostep approve" and "twostep reject": decide a paused
// round's approval, then follow the round.
func cmdDecide(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	comment := fs.String("comment", "", "a note for the record (and, on reject, for the model)")
	params := ""
	if name == "approve" {
		fs.StringVar(&params, "parameters", "", "edited parameters as a JSON object")
	}
	wait := fs.Bool("wait", true, "follow the round after the decision")
	pos, err := parse(fs, args, "ID", "APPROVAL")
	if err != nil {
		return err
	}
	d := client.Decision{Approve: name == "approve", Comment: *comment}
	if params != "" {
		if err := json.Unmarshal([]byte(params), &d.Parameters); err != nil || d.Parameters == nil {
			return usagef("--parameters must be a JSON object: %v", err)
		}
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	after, err := lastSeq(ctx, c, pos[0])
	if err != nil {
		return err
	}
	res, err := c.Decide(ctx, pos[0], pos[1], d, 0)
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, after, *wait)
}
