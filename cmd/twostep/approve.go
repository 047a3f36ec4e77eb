package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/twostep/twostep/client"
)

// cmdDecide is "twostep approve" and "twostep reject": decide a paused
// round's approval, then follow the round.
func cmdDecide(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	comment := fs.String("comment", "", "a note for the record (and, on reject, for the model)")
	params, constraints, remember := "", "", ""
	var ttl time.Duration
	if name == "approve" {
		fs.StringVar(&params, "parameters", "", "edited parameters as a JSON object")
		fs.StringVar(&constraints, "constraints", "", `on an intent approval: a JSON Schema fragment per field, e.g. {"priority":{"maximum":2}}`)
		fs.StringVar(&remember, "remember", "", "keep the decision standing for later calls: workflow or user")
		fs.DurationVar(&ttl, "ttl", 0, "with --remember: how long it stands (default: until revoked)")
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
	if constraints != "" {
		if err := json.Unmarshal([]byte(constraints), &d.Constraints); err != nil || d.Constraints == nil {
			return usagef("--constraints must be a JSON object of JSON Schema objects: %v", err)
		}
	}
	switch {
	case remember == "" && ttl != 0:
		return usagef("--ttl needs --remember")
	case remember != "" && remember != "workflow" && remember != "user":
		return usagef("--remember must be workflow or user, got %q", remember)
	case remember != "":
		d.Remember = &client.Remember{Scope: remember, TTL: ttl}
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
