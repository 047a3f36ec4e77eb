package memstore

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
