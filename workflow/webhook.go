package workflow

import (
	"context"
	"slices"
	"time"
)

// The webhook events of DESIGN §10.3: a round that ended or paused.
const (
	EventRoundCompleted        = "round.completed"
	EventRoundFailed           = "round.failed"
	EventRoundStopped          = "round.stopped"
	EventRoundAwaitingApproval = "round.awaiting_approval"
)

// WebhookEvents lists every event, in the order the documentation gives.
func WebhookEvents() []string {
	return []string{EventRoundCompleted, EventRoundFailed, EventRoundStopped, EventRoundAwaitingApproval}
}

// EventOf returns the webhook event of a round that reached status st, or
// "" for a status that is no event (running).
func EventOf(st Status) string {
	switch st {
	case StatusCompleted:
		return EventRoundCompleted
	case StatusFailed:
		return EventRoundFailed
	case StatusStopped:
		return EventRoundStopped
	case StatusAwaitingApproval:
		return EventRoundAwaitingApproval
	}
	return ""
}

// WebhookSubscription is where a workflow's (or a user's standing) events
// go: URL, the events it wants (empty: all) and the secret deliveries are
// signed with (Standard Webhooks, "whsec_<base64>"). Format names the
// body its deliveries carry: "" the gateway's own event, or a protocol's
// (WebhookFormatA2A).
type WebhookSubscription struct {
	URL    string
	Events []string
	Secret string
	Format string `json:",omitempty"`
}

// WebhookFormatA2A is the Format of a subscription an A2A client asked
// for (a push notification config, DESIGN §11.4): its deliveries carry an
// A2A StreamResponse.
const WebhookFormatA2A = "a2a"

// Wants reports whether s takes event.
func (s WebhookSubscription) Wants(event string) bool {
	return len(s.Events) == 0 || slices.Contains(s.Events, event)
}

// DeliveryStatus is where a webhook delivery stands.
type DeliveryStatus string

// The delivery statuses: pending until a 2xx (delivered) or until the
// retry window ends (failed: no more attempts).
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
)

// WebhookAttempt is one attempt of a delivery: when, the receiver's HTTP
// status (0 when none came) and what went wrong ("" for a 2xx).
type WebhookAttempt struct {
	At         time.Time
	StatusCode int
	Error      string
}

// WebhookDelivery is one event for one subscription, kept in the store's
// outbox until a 2xx answers it or its retry window ends. ID is the
// Standard Webhooks message id (webhook-id), the same for every attempt;
// Body is the exact payload signed and sent at every attempt.
type WebhookDelivery struct {
	ID, WorkflowID, UserID string
	Event                  string
	URL, Secret            string
	Body                   []byte
	CreatedAt              time.Time
	Status                 DeliveryStatus
	// NextAttempt is when the next attempt is due (zero once not pending).
	NextAttempt time.Time
	Attempts    []WebhookAttempt
	// Lease is set by WebhookOutbox.ClaimWebhooks on the deliveries it
	// hands out: the claim's token, which FinishWebhook checks.
	Lease string
}

// WebhookOutbox is the part of a store that keeps webhook deliveries.
// Deliveries enter it with the commit that ends or pauses a round
// (Commit.Webhooks), so a delivery exists exactly when its commit applied.
// Any instance sharing the store may deliver them: ClaimWebhooks leases a
// due delivery to one caller at a time.
type WebhookOutbox interface {
	// ClaimWebhooks leases up to max pending deliveries due at now to the
	// caller for lease: until the lease ends no other claim returns them.
	// Each carries its lease token in Lease. Users share the claim: a user
	// never has more than perUser deliveries leased at once (those of
	// earlier claims, by any caller, whose lease has not ended count;
	// perUser <= 0: no cap), and each claim starts with the next user in
	// turn, so one user's backlog — or slow receiver — cannot fill every
	// claim. On an error it returns the deliveries it leased before it,
	// for the caller to attempt. A stored delivery that cannot be read is
	// not returned but marked failed (the error says why) and reported in
	// the error; the claim goes on.
	ClaimWebhooks(ctx context.Context, now time.Time, lease time.Duration, max, perUser int) ([]WebhookDelivery, error)
	// FinishWebhook stores d's Status, NextAttempt and Attempts (the
	// attempt just made appended) and ends its lease, when d.Lease still
	// holds it: else KindConflict and nothing is written (another claim
	// took the delivery over after the lease ended). A pending d becomes
	// due again at NextAttempt.
	FinishWebhook(ctx context.Context, d WebhookDelivery) error
	// WebhookDeliveries returns workflowID's deliveries, oldest first,
	// their secrets cleared; a deleted workflow's too (deleting takes no
	// delivery back: they are still delivered).
	WebhookDeliveries(ctx context.Context, workflowID string) ([]WebhookDelivery, error)
	// WebhookSubscription returns the subscription stored with the
	// workflow at its create (Commit.Webhook), or nil.
	WebhookSubscription(ctx context.Context, workflowID string) (*WebhookSubscription, error)
}

// WebhookSource decides the deliveries of an event: the engine asks it
// for every commit that ends or pauses a round and enqueues what it
// returns with that commit.
type WebhookSource interface {
	// Deliveries returns the deliveries event asks for, wf being the
	// workflow as the commit stores it (its new version set). None is an
	// empty result, not an error.
	Deliveries(ctx context.Context, event string, wf *Workflow) ([]WebhookDelivery, error)
}
