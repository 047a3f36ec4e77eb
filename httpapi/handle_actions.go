package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

type listActionsOutput struct {
	Body apiv1.ActionList
}

func (s *Server) registerActions(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "listActions", Method: http.MethodGet, Path: "/api/v1/actions",
		Summary: "List the registered actions", Tags: []string{"actions"}, Errors: []int{401},
	}, s.listActions)
}

func (s *Server) listActions(ctx context.Context, _ *struct{}) (*listActionsOutput, error) {
	specs := s.actions.Actions()
	if scoped, ok := s.actions.(workflow.UserScoped); ok {
		// Another user's MCP tools are not listed.
		specs = scoped.ForUser(UserFrom(ctx)).Actions()
	}
	views, err := actionViews(specs)
	if err != nil {
		return nil, s.fail(ctx, "listActions", err)
	}
	return &listActionsOutput{Body: apiv1.ActionList{Actions: views}}, nil
}

// actionViews describes specs for the API.
func actionViews(specs []workflow.ActionSpec) ([]apiv1.ActionView, error) {
	out := make([]apiv1.ActionView, 0, len(specs))
	for _, a := range specs {
		params := map[string]any{}
		if len(a.Parameters) > 0 {
			if err := json.Unmarshal(a.Parameters, &params); err != nil {
				return nil, err
			}
		}
		docs := string(a.Documents)
		if docs == "" {
			docs = "none"
		}
		out = append(out, apiv1.ActionView{
			Name: a.Name, Description: a.Description, Parameters: params, Effect: string(a.Effect),
			Connection: a.ConnectionKind, ConnectionRequired: a.ConnectionRequired, Documents: docs,
			Server: a.Server, HTTPMethod: a.HTTPMethod, HTTPPath: a.HTTPPath,
		})
	}
	return out, nil
}
