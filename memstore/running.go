package memstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// Running returns the ids of the workflows whose stored status is
// StatusRunning. Commit keeps it exact: the status is read from the same
// record a commit writes.
func (s *Store) Running(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	for id, rec := range s.wfs {
		if rec.status == workflow.StatusRunning && !s.expired(rec) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// indexRunning puts the workflow id in, or takes it out of, its user's
// running index after a commit stored rec. The caller holds s.mu for
// writing.
func (s *Store) indexRunning(id string, rec *record) {
	if rec.status != workflow.StatusRunning {
		s.unindexRunning(id, rec.userID)
		return
	}
	set := s.running[rec.userID]
	if set == nil {
		set = make(map[string]struct{})
		s.running[rec.userID] = set
	}
	set[id] = struct{}{}
}

// unindexRunning takes the workflow id out of userID's running index,
// dropping the user's entry when it empties so that the index holds only
// users with running workflows. The caller holds s.mu for writing.
func (s *Store) unindexRunning(id, userID string) {
	set := s.running[userID]
	delete(set, id)
	if len(set) == 0 {
		delete(s.running, userID)
	}
}
