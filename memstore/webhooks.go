package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.WebhookOutbox = (*Store)(nil)

// hook is a delivery as the outbox keeps it, with its lease and, once no
// longer pending, when it finished.
type hook struct {
	d          workflow.WebhookDelivery
	leaseUntil time.Time
	finished   time.Time
}

// hookKeep is how long a finished delivery stays listable: each finish
// drops those finished longer before it.
const hookKeep = 7 * 24 * time.Hour

// enqueueHooks enters c's deliveries in the outbox (the commit applies).
// The caller holds s.mu for writing.
func (s *Store) enqueueHooks(c workflow.Commit) {
	for _, d := range c.Webhooks {
		own(&d)
		d.Status, d.Lease = workflow.DeliveryPending, ""
		s.hooks[d.ID] = &hook{d: d}
		s.hookOrder = append(s.hookOrder, d.ID)
	}
}

// ClaimWebhooks leases up to limit pending deliveries due at now under the
// store's one lock: users in turn (starting one further each claim), each
// one's oldest first, at most perUser leased per user at once.
func (s *Store) ClaimWebhooks(ctx context.Context, now time.Time, lease time.Duration, limit, perUser int) (_ []workflow.WebhookDelivery, err error) {
	defer workflow.Wrap(&err, "memstore.ClaimWebhooks")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	due, users, inflight := s.dueHooks(now)
	var out []workflow.WebhookDelivery
	if len(users) == 0 {
		return out, nil
	}
	start := int(s.hookTurn % uint64(len(users)))
	s.hookTurn++
	for i := range users {
		user := users[(start+i)%len(users)]
		take := limit - len(out)
		if perUser > 0 {
			take = min(take, perUser-inflight[user])
		}
		for _, h := range due[user][:min(max(take, 0), len(due[user]))] {
			h.d.Lease = workflow.NewID("lease_")
			h.leaseUntil = now.Add(lease)
			d := h.d
			own(&d)
			out = append(out, d)
		}
	}
	return out, nil
}

// dueHooks returns the pending deliveries due at now by user (oldest
// first), the users in the order of their oldest due delivery, and how
// many each user has leased now. The caller holds s.mu.
func (s *Store) dueHooks(now time.Time) (map[string][]*hook, []string, map[string]int) {
	due, inflight := map[string][]*hook{}, map[string]int{}
	var users []string
	for _, id := range s.hookOrder {
		h := s.hooks[id]
		switch {
		case h == nil || h.d.Status != workflow.DeliveryPending:
		case h.leaseUntil.After(now):
			inflight[h.d.UserID]++
		case !h.d.NextAttempt.After(now):
			if due[h.d.UserID] == nil {
				users = append(users, h.d.UserID)
			}
			due[h.d.UserID] = append(due[h.d.UserID], h)
		}
	}
	return due, users, inflight
}

// FinishWebhook records d's outcome when d.Lease still holds its lease;
// a finished delivery (delivered or failed) no longer keeps its secret.
func (s *Store) FinishWebhook(ctx context.Context, d workflow.WebhookDelivery) (err error) {
	defer workflow.Wrap(&err, "memstore.FinishWebhook(%q)", d.ID)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hooks[d.ID]
	if h == nil || d.Lease == "" || h.d.Lease != d.Lease {
		return workflow.Errorf(workflow.KindConflict, "delivery %s is no longer leased to this caller", d.ID)
	}
	h.d.Status, h.d.NextAttempt, h.d.Attempts = d.Status, d.NextAttempt, slices.Clone(d.Attempts)
	h.d.Lease, h.leaseUntil = "", time.Time{}
	at := time.Now()
	if n := len(d.Attempts); n > 0 {
		at = d.Attempts[n-1].At
	}
	if d.Status != workflow.DeliveryPending {
		h.finished = at
		h.d.Secret = "" // no attempt needs it any more
	}
	s.hookOrder = slices.DeleteFunc(s.hookOrder, func(id string) bool {
		old := s.hooks[id]
		if old != nil && !old.finished.IsZero() && old.finished.Before(at.Add(-hookKeep)) {
			delete(s.hooks, id)
			return true
		}
		return false
	})
	return nil
}

// WebhookDeliveries returns workflowID's deliveries, oldest first, without
// their secrets.
func (s *Store) WebhookDeliveries(ctx context.Context, workflowID string) (_ []workflow.WebhookDelivery, err error) {
	defer workflow.Wrap(&err, "memstore.WebhookDeliveries(%q)", workflowID)
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []workflow.WebhookDelivery{}
	for _, id := range s.hookOrder {
		if h := s.hooks[id]; h != nil && h.d.WorkflowID == workflowID {
			d := h.d
			own(&d)
			d.Secret, d.Lease = "", ""
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// WebhookSubscription returns the subscription stored at the workflow's
// create, or nil.
func (s *Store) WebhookSubscription(ctx context.Context, workflowID string) (_ *workflow.WebhookSubscription, err error) {
	defer workflow.Wrap(&err, "memstore.WebhookSubscription(%q)", workflowID)
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.live(workflowID)
	if !ok || rec.webhook == nil {
		return nil, nil
	}
	return copyOf(rec.webhook), nil
}
