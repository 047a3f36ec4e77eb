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

// DueApprovals reads at most limit entries of the approval index after
// the place after whose approval's expiresAt is at or before now, in
// order, and returns the ids of the live ones and the place after the last
// entry read (zero when no entry due is left). The index is a slice sorted
// by expiresAt and id that Commit and DeleteWorkflow keep under the same
// lock as the records, so it is exact and a call costs the entries it
// reads; the entries of workflows outlived by the retention are removed
// with their workflow, as a commit to one does.
func (s *Store) DueApprovals(ctx context.Context, now time.Time, after workflow.DueCursor, limit int) (_ []string, _ workflow.DueCursor, err error) {
	defer workflow.Wrap(&err, "memstore.DueApprovals")
	if err := ctx.Err(); err != nil {
		return nil, workflow.DueCursor{}, err
	}
	if limit <= 0 {
		return nil, workflow.DueCursor{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	start := 0
	if !after.IsZero() {
		start, _ = slices.BinarySearchFunc(s.due, dueEntry{at: after.ExpiresAt.UnixNano(), id: after.ID}, compareDue)
		if start < len(s.due) && s.due[start].at == after.ExpiresAt.UnixNano() && s.due[start].id == after.ID {
			start++
		}
	}
	var ids []string
	var gone []string
	end := start
	for end < len(s.due) && end-start < limit && s.due[end].at <= now.UnixNano() {
		id := s.due[end].id
		if _, ok := s.live(id); ok {
			ids = append(ids, id)
		} else {
			gone = append(gone, id)
		}
		end++
	}
	var next workflow.DueCursor
	if end > start && end < len(s.due) && s.due[end].at <= now.UnixNano() {
		last := s.due[end-1]
		next = workflow.DueCursor{ExpiresAt: time.Unix(0, last.at), ID: last.id}
	}
	for _, id := range gone {
		if rec, ok := s.wfs[id]; ok {
			s.remove(id, rec)
		} else {
			s.unindexApproval(id)
		}
	}
	return ids, next, nil
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
