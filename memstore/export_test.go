package memstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// entriesOf counts what s still holds for the workflow: its record, its
// entry in a user's running index, its approval index entries and the
// trace index entries that name it. Tests expect 0 after DeleteWorkflow.
func (s *Store) entriesOf(workflowID string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	if _, ok := s.wfs[workflowID]; ok {
		n++
	}
	for _, set := range s.running {
		if _, ok := set[workflowID]; ok {
			n++
		}
	}
	if _, ok := s.dueAt[workflowID]; ok {
		n++
	}
	for _, e := range s.due {
		if e.id == workflowID {
			n++
		}
	}
	for _, wf := range s.traces {
		if wf == workflowID {
			n++
		}
	}
	return n
}

// EntriesOf is entriesOf for the external test package.
var EntriesOf = (*Store).entriesOf

// runningFor returns the ids in userID's running index, which Commit and
// DeleteWorkflow keep under the same lock as the records and
// Commit.RunningLimit counts. The conformance suite checks the index
// through it.
func (s *Store) runningFor(ctx context.Context, userID string) (_ []string, err error) {
	defer workflow.Wrap(&err, "memstore.runningFor(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	set := s.running[userID]
	if len(set) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	return ids, nil
}

// RunningFor is runningFor for the external test package.
var RunningFor = (*Store).runningFor
