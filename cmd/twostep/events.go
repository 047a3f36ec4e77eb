package main

import (
	"context"
	"encoding/json"
	"fmt"
)

// cmdEvents is "twostep events": a workflow's events until its round
// ends or pauses.
func cmdEvents(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	for ev, err := range c.Events(ctx, pos[0]) {
		if err != nil {
			return err
		}
		switch {
		case a.json:
			if err := enc.Encode(ev); err != nil {
				return err
			}
		case ev.Type == "message":
			printMessage(a.stdout, ev.Message)
		case ev.Type == "status":
			fmt.Fprintf(a.stdout, "status %s (round %d, step %d)\n", ev.Workflow.Status, ev.Workflow.Round, ev.Workflow.Step)
		case ev.Type == "approval":
			fmt.Fprintln(a.stdout, approvalLine(ev.Approval))
		default:
			fmt.Fprintln(a.stdout, ev.Type)
		}
	}
	return nil
}
