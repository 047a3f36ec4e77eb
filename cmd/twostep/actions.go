package main

import (
	"context"
	"fmt"
)

// cmdActions is "twostep actions": the actions the gateway offers.
func cmdActions(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	acts, err := c.Actions(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(acts)
	}
	for _, act := range acts {
		fmt.Fprintf(a.stdout, "%-24s %-5s %s\n", act.Name, act.Effect, oneLine(act.Description, 90))
	}
	return nil
}
