package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// WebhookOptions enables webhooks on create.
type WebhookOptions struct {
	// CheckURL says why a URL cannot receive webhooks (nil: it can).
	CheckURL func(string) error
	// NewSecret makes a workflow's signing secret.
	NewSecret func() string
}

// subscription checks in and returns the workflow's subscription, its
// secret made anew; nil for no webhook.
func (s *Server) subscription(in *apiv1.WebhookInput) (*workflow.WebhookSubscription, error) {
	if in == nil {
		return nil, nil
	}
	if s.hooks.CheckURL == nil || s.hooks.NewSecret == nil {
		return nil, invalid("body.webhook", "webhooks are not enabled on this gateway", nil)
	}
	if err := s.hooks.CheckURL(in.URL); err != nil {
		return nil, invalid("body.webhook.url", err.Error(), in.URL)
	}
	return &workflow.WebhookSubscription{URL: in.URL, Events: in.Events, Secret: s.hooks.NewSecret()}, nil
}

// WebhookDeliveries reads the webhook outbox (workflow.WebhookOutbox).
type WebhookDeliveries interface {
	WebhookDeliveries(ctx context.Context, workflowID string) ([]workflow.WebhookDelivery, error)
}

type deliveriesInput struct {
	Workflow string `query:"workflow" required:"true" maxLength:"64" doc:"Workflow id (wf_...)"`
}

type deliveriesOutput struct {
	Body adminv1.DeliveryList
}

func (a *Admin) registerWebhooks(api huma.API) {
	if a.deliveries == nil {
		return
	}
	huma.Register(api, adminOp("listWebhookDeliveries", http.MethodGet, "/admin/v1/webhooks/deliveries",
		"List a workflow's webhook deliveries and their attempts", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *deliveriesInput) (*deliveriesOutput, error) {
			if !workflow.ValidID(workflow.PrefixWorkflow, in.Workflow) {
				return nil, invalid("query.workflow", "not a workflow id", in.Workflow)
			}
			ds, err := a.deliveries.WebhookDeliveries(ctx, in.Workflow)
			if err != nil {
				return nil, a.fail(ctx, "listWebhookDeliveries", err)
			}
			out := &deliveriesOutput{Body: adminv1.DeliveryList{Deliveries: make([]adminv1.DeliveryView, len(ds))}}
			for i, d := range ds {
				v := adminv1.DeliveryView{ID: d.ID, WorkflowID: d.WorkflowID, Event: d.Event, URL: d.URL, Status: string(d.Status),
					CreatedAt: d.CreatedAt, Attempts: make([]adminv1.AttemptView, len(d.Attempts))}
				if d.Status == workflow.DeliveryPending && !d.NextAttempt.IsZero() {
					next := d.NextAttempt
					v.NextAttempt = &next
				}
				for j, at := range d.Attempts {
					v.Attempts[j] = adminv1.AttemptView{At: at.At, ResponseCode: at.StatusCode, Error: at.Error}
				}
				out.Body.Deliveries[i] = v
			}
			return out, nil
		})
}

// ViewWorkflow is the workflow as the API shows it: the data.workflow of
// a webhook delivery.
func ViewWorkflow(w *workflow.Workflow) apiv1.WorkflowView { return viewWorkflow(w) }
