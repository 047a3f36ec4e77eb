package main

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/client"
)

// cmdSimple is "twostep stop", "twostep resume" and "twostep delete":
// one call on a workflow by its ID.
func cmdSimple(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	var w *client.Workflow
	switch name {
	case "stop":
		w, err = c.Stop(ctx, pos[0])
	case "resume":
		w, err = c.Resume(ctx, pos[0])
	case "delete":
		if err = c.Delete(ctx, pos[0]); err == nil && !a.json {
			fmt.Fprintf(a.stdout, "%s deleted\n", pos[0])
		}
		return err
	}
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(w)
	}
	fmt.Fprintf(a.stdout, "%s\t%s\tround %d\n", w.ID, w.Status, w.Round)
	return nil
}
