package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.StandingStore = (*Store)(nil)

// PutStanding stores a new standing approval under its user, with no use
// yet; KindInvalid when the user keeps workflow.MaxStandingApprovals live
// ones already.
func (s *Store) PutStanding(ctx context.Context, a workflow.StandingApproval) (err error) {
	defer workflow.Wrap(&err, "memstore.PutStanding")
	if err := ctx.Err(); err != nil {
		return err
	}
	s.standingMu.Lock()
	defer s.standingMu.Unlock()
	list := s.liveStanding(a.UserID, a.GrantedAt)
	if len(list) >= workflow.MaxStandingApprovals {
		return workflow.Errorf(workflow.KindInvalid, "user %s keeps %d standing approvals already: revoke some first", a.UserID, len(list))
	}
	own(&a)
	a.Uses = 0
	s.standing[a.UserID] = append(list, a)
	return nil
}

// ListStanding returns userID's live standing approvals at now, oldest
// first, as copies; the expired ones are dropped.
func (s *Store) ListStanding(ctx context.Context, userID string, now time.Time) (_ []workflow.StandingApproval, err error) {
	defer workflow.Wrap(&err, "memstore.ListStanding")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.standingMu.Lock()
	defer s.standingMu.Unlock()
	list := s.liveStanding(userID, now)
	out := make([]workflow.StandingApproval, len(list))
	for i, a := range list {
		out[i] = a
		own(&out[i])
	}
	return out, nil
}

// DeleteStanding removes userID's standing approval id.
func (s *Store) DeleteStanding(ctx context.Context, userID, id string) (err error) {
	defer workflow.Wrap(&err, "memstore.DeleteStanding")
	if err := ctx.Err(); err != nil {
		return err
	}
	s.standingMu.Lock()
	defer s.standingMu.Unlock()
	list := s.standing[userID]
	i := slices.IndexFunc(list, func(a workflow.StandingApproval) bool { return a.ID == id })
	if i < 0 {
		return workflow.Errorf(workflow.KindNotFound, "standing approval %s not found", id)
	}
	s.standing[userID] = slices.Delete(list, i, i+1)
	if len(s.standing[userID]) == 0 {
		delete(s.standing, userID)
	}
	return nil
}

// UseStanding counts one use of userID's standing approval id under the
// lock and returns the count.
func (s *Store) UseStanding(ctx context.Context, userID, id string) (_ int64, err error) {
	defer workflow.Wrap(&err, "memstore.UseStanding")
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.standingMu.Lock()
	defer s.standingMu.Unlock()
	list := s.standing[userID]
	i := slices.IndexFunc(list, func(a workflow.StandingApproval) bool { return a.ID == id })
	if i < 0 {
		return 0, workflow.Errorf(workflow.KindNotFound, "standing approval %s not found (revoked)", id)
	}
	list[i].Uses++
	return list[i].Uses, nil
}

// liveStanding drops userID's expired standing approvals at now and
// returns the rest. The caller holds standingMu.
func (s *Store) liveStanding(userID string, now time.Time) []workflow.StandingApproval {
	list := slices.DeleteFunc(s.standing[userID], func(a workflow.StandingApproval) bool { return !a.Live(now) })
	if len(list) == 0 {
		delete(s.standing, userID)
		return nil
	}
	s.standing[userID] = list
	return list
}
