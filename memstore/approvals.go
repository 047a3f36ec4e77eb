package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.ApprovalIndex = (*Store)(nil)

// dueEntry is one workflow awaiting approval in the approval index: the
// approval's expiresAt (Unix nanoseconds) and the workflow's id.
type dueEntry struct {
	at int64
	id string
}

func compareDue(a, b dueEntry) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// DueApprovals returns the ids of at most limit workflows awaiting approval
// whose approval's expiresAt is at or before now, earliest first. The index
// is a slice sorted by expiresAt that Commit and DeleteWorkflow keep under
// the same lock as the records, so it is exact and a call costs the
// entries it returns.
func (s *Store) DueApprovals(ctx context.Context, now time.Time, limit int) (_ []string, err error) {
	defer workflow.Wrap(&err, "memstore.DueApprovals")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	for _, e := range s.due {
		if e.at > now.UnixNano() || len(ids) >= limit {
			break
		}
		if _, ok := s.live(e.id); ok {
			ids = append(ids, e.id)
		}
	}
	return ids, nil
}

// BackfillApprovals adds nothing: every workflow this store holds was
// indexed by its commits.
func (s *Store) BackfillApprovals(ctx context.Context) (int, error) { return 0, ctx.Err() }

// indexApproval puts the workflow id in the approval index under its
// pending approval's expiresAt while rec awaits approval, and takes it out
// otherwise. The caller holds s.mu for writing.
func (s *Store) indexApproval(id string, rec *record) {
	wf := rec.state
	if wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval == nil {
		s.unindexApproval(id)
		return
	}
	at := wf.PendingApproval.ExpiresAt.UnixNano()
	if old, ok := s.dueAt[id]; ok && old == at {
		return
	}
	s.unindexApproval(id)
	e := dueEntry{at: at, id: id}
	i, _ := slices.BinarySearchFunc(s.due, e, compareDue)
	s.due = slices.Insert(s.due, i, e)
	s.dueAt[id] = at
}

// unindexApproval takes the workflow id out of the approval index. The
// caller holds s.mu for writing.
func (s *Store) unindexApproval(id string) {
	at, ok := s.dueAt[id]
	if !ok {
		return
	}
	if i, found := slices.BinarySearchFunc(s.due, dueEntry{at: at, id: id}, compareDue); found {
		s.due = slices.Delete(s.due, i, i+1)
	}
	delete(s.dueAt, id)
}
