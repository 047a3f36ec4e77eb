package engine

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/workflow"
)

// withWebhooks attaches to c the deliveries its event asks for, when the
// engine has a WebhookSource and c moves the workflow to an event status,
// or when c ends the round ended and starts a queued one in the same
// commit (the stored status stays running): then the event is the ended
// round's, with that round's state as the body. A round ended by an
// interrupting round is no event (its stop reason is never shown; the
// round that replaced it sends its own). The store enqueues them when,
// and only when, the commit applies; every commit that moves a workflow to
// an event status changes its status, so each round end is enqueued once.
func (e *Engine) withWebhooks(ctx context.Context, c workflow.Commit, ended *workflow.Workflow) (workflow.Commit, error) {
	if e.cfg.Webhooks == nil {
		return c, nil
	}
	of := c.Workflow
	if workflow.EventOf(of.Status) == "" && ended != nil && ended.StopReason != StopInterrupted {
		of = ended
	}
	event := workflow.EventOf(of.Status)
	if event == "" {
		return c, nil
	}
	view := of.Clone()
	view.Version = c.ExpectedVersion + 1
	ds, err := e.cfg.Webhooks.Deliveries(ctx, event, view)
	if err != nil {
		return c, fmt.Errorf("webhook deliveries of %s: %w", c.Workflow.ID, err)
	}
	c.Webhooks = ds
	return c, nil
}

// commit is Store.Commit with the commit's webhook deliveries attached;
// ended is the round c ends when c also starts a queued one (else nil).
func (e *Engine) commit(ctx context.Context, c workflow.Commit, ended *workflow.Workflow) (*workflow.Workflow, []workflow.Message, error) {
	c, err := e.withWebhooks(ctx, c, ended)
	if err != nil {
		return nil, nil, err
	}
	return e.store.Commit(ctx, c)
}
