package main

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/client"
)

// cmdShow is "twostep show": a workflow and its messages.
func cmdShow(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	w, err := c.Get(ctx, pos[0])
	if err != nil {
		return err
	}
	msgs, err := c.Messages(ctx, pos[0], 0)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(struct {
			Workflow *client.Workflow `json:"workflow"`
			Messages []client.Message `json:"messages"`
		}{w, msgs})
	}
	fmt.Fprintf(a.stdout, "%s  %s\nstatus %s", w.ID, w.Title, w.Status)
	if w.StopReason != "" && w.StopReason != w.Status {
		fmt.Fprintf(a.stdout, " (%s)", w.StopReason)
	}
	fmt.Fprintf(a.stdout, ", round %d, step %d of %d, %s, %s\n", w.Round, w.Step, w.MaxSteps, w.Mode, count(w.Stats.LLMCalls, "model call"))
	if w.Error != "" {
		fmt.Fprintf(a.stdout, "error: %s\n", w.Error)
	}
	if p := w.PendingApproval; p != nil {
		fmt.Fprintf(a.stdout, "waiting for %s\n", approvalLine(p))
	}
	for i := range msgs {
		printMessage(a.stdout, &msgs[i])
	}
	return nil
}
