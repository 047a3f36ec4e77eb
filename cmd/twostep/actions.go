package main

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/client"
)

// cmdActions is "twostep actions": the actions the gateway offers.
func cmdActions(ctx context.Context, a *app, name string, args []string) error {
	return listCommand(ctx, a, name, args, (*client.Client).Actions, func(act client.Action) {
		fmt.Fprintf(a.stdout, "%-24s %-5s %s\n", act.Name, act.Effect, oneLine(act.Description, 90))
	})
}
