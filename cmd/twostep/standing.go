package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twostep/twostep/client"
)

// cmdStanding lists the caller's standing approvals (DESIGN §10.4).
func cmdStanding(ctx context.Context, a *app, name string, args []string) error {
	return listCommand(ctx, a, name, args, (*client.Client).StandingApprovals, func(s client.StandingApproval) {
		var text []byte
		if s.Kind == "intent" {
			text, _ = json.Marshal(s.Constraints)
		} else {
			text, _ = json.Marshal(s.Parameters)
		}
		scope := s.Scope
		if s.WorkflowID != "" {
			scope += " " + s.WorkflowID
		}
		expires := "until revoked"
		if s.ExpiresAt != nil {
			expires = "until " + s.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(a.stdout, "%s  %s %s (%s) %s, granted by %s, %s, %s\n", s.ID, s.Action, s.Kind, scope,
			oneLine(string(text), 120), s.GrantedBy, expires, count(int(s.Uses), "use"))
	})
}

// cmdRevoke revokes a standing approval: the next step that needs it
// pauses again.
func cmdRevoke(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "STANDING_ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if err := c.RevokeStanding(ctx, pos[0]); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]string{"revoked": pos[0]})
	}
	fmt.Fprintf(a.stdout, "revoked %s\n", pos[0])
	return nil
}
