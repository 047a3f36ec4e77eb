package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Standing is a webhook an operator configured: for one user's workflows,
// or every user's when User is "".
type Standing struct {
	User string
	Sub  workflow.WebhookSubscription
}

// Source is the engine's workflow.WebhookSource: an event goes to the
// workflow's own subscription (stored with it at create) and to every
// standing subscription of its user that wants it.
type Source struct {
	// Subscriptions reads a workflow's own subscription (the store).
	Subscriptions interface {
		WebhookSubscription(ctx context.Context, workflowID string) (*workflow.WebhookSubscription, error)
	}
	Standing []Standing
	// View renders the workflow as the API shows it (the body's
	// data.workflow).
	View func(*workflow.Workflow) any
	// Bodies renders the body of a subscription whose Format is not ""
	// (an A2A push notification), by format; a format it lacks gets the
	// gateway's own body.
	Bodies map[string]func(event string, wf *workflow.Workflow) ([]byte, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var _ workflow.WebhookSource = (*Source)(nil)

// payload is a delivery's body: {type, timestamp, data: {workflow}}.
type payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		Workflow any `json:"workflow"`
	} `json:"data"`
}

// Deliveries returns one pending delivery, due now, per subscription that
// wants event, all with the same body.
func (s *Source) Deliveries(ctx context.Context, event string, wf *workflow.Workflow) ([]workflow.WebhookDelivery, error) {
	var subs []workflow.WebhookSubscription
	own, err := s.Subscriptions.WebhookSubscription(ctx, wf.ID)
	if err != nil {
		return nil, fmt.Errorf("webhooks: the subscription of %s: %w", wf.ID, err)
	}
	if own != nil && own.Wants(event) {
		subs = append(subs, *own)
	}
	for _, st := range s.Standing {
		if (st.User == "" || st.User == wf.UserID) && st.Sub.Wants(event) {
			subs = append(subs, st.Sub)
		}
	}
	if len(subs) == 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	if s.Now != nil {
		now = s.Now().UTC()
	}
	var p payload
	p.Type, p.Timestamp, p.Data.Workflow = event, now, s.View(wf)
	body, err := json.Marshal(p)
	if err != nil {
		return nil, workflow.WrapKind(workflow.KindInternal, err, "webhooks: the body of %s", event)
	}
	out := make([]workflow.WebhookDelivery, len(subs))
	for i, sub := range subs {
		b := body
		if render := s.Bodies[sub.Format]; sub.Format != "" && render != nil {
			if b, err = render(event, wf); err != nil {
				return nil, workflow.WrapKind(workflow.KindInternal, err, "webhooks: the %s body of %s", sub.Format, event)
			}
		}
		out[i] = workflow.WebhookDelivery{
			ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: wf.ID, UserID: wf.UserID, Event: event,
			URL: sub.URL, Secret: sub.Secret, Body: b, CreatedAt: now, NextAttempt: now, Status: workflow.DeliveryPending,
		}
	}
	return out, nil
}
