package httpapi

import (
	"context"
	"github.com/twostep/twostep/apiv1"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// registerActions adds GET /admin/v1/actions: every registered action, the
// per-user MCP servers' tools of every user included, for the admin page.
func (a *Admin) registerActions(api huma.API) {
	huma.Register(api, adminOp("adminListActions", http.MethodGet, "/admin/v1/actions",
		"List every registered action, MCP tools of every user included"), a.listActions)
}

func (a *Admin) listActions(ctx context.Context, _ *struct{}) (*listActionsOutput, error) {
	views, err := actionViews(a.registry.Actions())
	if err != nil {
		return nil, a.fail(ctx, "adminListActions", err)
	}
	return &listActionsOutput{Body: apiv1.ActionList{Actions: views}}, nil
}
