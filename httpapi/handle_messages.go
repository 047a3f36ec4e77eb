package httpapi

import (
	"context"
	"github.com/twostep/twostep/apiv1"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

type listMessagesInput struct {
	WorkflowPath
	After int64 `query:"after" minimum:"0" doc:"Only messages with a greater seq"`
}

type listMessagesOutput struct {
	Body apiv1.MessageList
}

func (s *Server) registerMessages(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "listMessages", Method: http.MethodGet, Path: "/api/v1/workflows/{id}/messages",
		Summary: "List a workflow's messages in seq order", Tags: []string{"messages"},
		Errors: []int{401, 404, 422},
	}, s.listMessages)
}

func (s *Server) listMessages(ctx context.Context, in *listMessagesInput) (*listMessagesOutput, error) {
	_, msgs, err := s.reads.Messages(ctx, UserFrom(ctx), in.ID, in.After, 0)
	if err != nil {
		return nil, s.fail(ctx, "listMessages", err)
	}
	out := &listMessagesOutput{Body: apiv1.MessageList{Messages: make([]apiv1.MessageView, len(msgs))}}
	for i, m := range msgs {
		out.Body.Messages[i] = viewMessage(m)
	}
	return out, nil
}
