package main

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/client"
)

// cmdList is "twostep list": the workflows, newest first.
func cmdList(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var o client.ListOptions
	fs.StringVar(&o.Status, "status", "", "only this status (running, awaiting_approval, completed, failed, stopped)")
	fs.IntVar(&o.Limit, "limit", 0, "page size (default: the gateway's)")
	fs.StringVar(&o.Cursor, "cursor", "", "the next page's cursor")
	all := fs.Bool("all", false, "every page")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	page := &client.Page{Workflows: []client.Workflow{}}
	if *all {
		for w, err := range c.ListAll(ctx, o) {
			if err != nil {
				return err
			}
			page.Workflows = append(page.Workflows, w)
		}
	} else if page, err = c.List(ctx, o); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(page)
	}
	for _, w := range page.Workflows {
		fmt.Fprintf(a.stdout, "%s\t%-17s\tround %d\t%s\t%s\n", w.ID, w.Status, w.Round,
			w.UpdatedAt.Local().Format("2006-01-02 15:04"), oneLine(w.Title, 60))
	}
	if page.NextCursor != "" {
		fmt.Fprintf(a.stderr, "twostep: more with --cursor %s (or --all)\n", page.NextCursor)
	}
	return nil
}
