package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// ActionView describes a registered action (DESIGN §6).
type ActionView struct {
	Name        string         `json:"name" doc:"method.action"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters" doc:"JSON Schema of the business parameters"`
	Effect      string         `json:"effect" enum:"read,write"`
	Connection  string         `json:"connection" doc:"Kind of connection the action uses; empty for none"`
	// ConnectionRequired and Documents add detail beyond DESIGN §6.
	ConnectionRequired bool   `json:"connectionRequired"`
	Documents          string `json:"documents" enum:"none,optional,required"`
	// Server names the MCP server or openapiActions entry serving the action.
	Server string `json:"server,omitempty" doc:"The MCP server (mcp.<server>.<tool>) or the openapiActions entry (<name>.<operationId>) that serves the action; absent for the gateway's own actions"`
	// HTTPMethod and HTTPPath are an OpenAPI operation's method and path.
	HTTPMethod string `json:"httpMethod,omitempty" doc:"The HTTP method of the REST operation an openapiActions action calls"`
	HTTPPath   string `json:"httpPath,omitempty" doc:"The path template of the REST operation an openapiActions action calls, such as /tickets/{id}"`
}

// ActionList is every registered action, sorted by name.
type ActionList struct {
	Actions []ActionView `json:"actions"`
}

type listActionsOutput struct {
	Body ActionList
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
	return &listActionsOutput{Body: ActionList{Actions: views}}, nil
}

// actionViews describes specs for the API.
func actionViews(specs []workflow.ActionSpec) ([]ActionView, error) {
	out := make([]ActionView, 0, len(specs))
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
		out = append(out, ActionView{
			Name: a.Name, Description: a.Description, Parameters: params, Effect: string(a.Effect),
			Connection: a.ConnectionKind, ConnectionRequired: a.ConnectionRequired, Documents: docs,
			Server: a.Server, HTTPMethod: a.HTTPMethod, HTTPPath: a.HTTPPath,
		})
	}
	return out, nil
}
