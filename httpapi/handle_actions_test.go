package httpapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// scopedActions is a lister with one per-user MCP tool (alice's) and one
// shared MCP tool.
type scopedActions struct{}

var scopedSpecs = []workflow.ActionSpec{
	{Name: "mcp.files.read", Effect: workflow.EffectRead, Server: "files", Documents: workflow.DocumentsNone},
	{Name: "tickets.getTicket", Effect: workflow.EffectRead, Server: "tickets", HTTPMethod: "GET", HTTPPath: "/tickets/{ticketId}"},
	{Name: "mcp.mine.write", Effect: workflow.EffectWrite, Server: "mine", Documents: workflow.DocumentsNone},
}

func (scopedActions) Actions() []workflow.ActionSpec { return scopedSpecs }

func (scopedActions) ForUser(userID string) workflow.Registry {
	if userID == "alice" {
		return scopedView(scopedSpecs)
	}
	return scopedView(scopedSpecs[:2])
}

// scopedView is the part of a workflow.Registry the handler reads.
type scopedView []workflow.ActionSpec

func (v scopedView) Actions() []workflow.ActionSpec { return v }
func (v scopedView) Action(string) (workflow.ActionSpec, bool) {
	return workflow.ActionSpec{}, false
}
func (v scopedView) ValidateParameters(string, map[string]any) []string { return nil }
func (v scopedView) Execute(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	return workflow.ActionResult{}, nil
}
func (v scopedView) Connections(string) []workflow.Connection { return nil }

// TestListActionsShowsServersAndScopesPerUser: MCP tools carry their
// server, OpenAPI operations their source, method and path, and a per-user server's tools are listed to that user only.
func TestListActionsShowsServersAndScopesPerUser(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Actions = scopedActions{} })
	for _, tt := range []struct {
		token string
		want  []string
	}{{aliceToken, []string{"mcp.files.read@files", "tickets.getTicket@tickets GET /tickets/{ticketId}", "mcp.mine.write@mine"}},
		{bobToken, []string{"mcp.files.read@files", "tickets.getTicket@tickets GET /tickets/{ticketId}"}}} {
		rec := env.do(t, "GET", "/api/v1/actions", tt.token, nil)
		var list apiv1.ActionList
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var got []string
		for _, a := range list.Actions {
			got = append(got, strings.TrimSpace(a.Name+"@"+a.Server+" "+a.HTTPMethod+" "+a.HTTPPath))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("actions = %v, want %v", got, tt.want)
		}
	}
}
