package memstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// AppendTrace stores t with its workflow, dropping the oldest traces beyond
// the cap. The workflow must exist (KindNotFound otherwise) and the trace id
// must be new (KindConflict otherwise).
func (s *Store) AppendTrace(ctx context.Context, t workflow.Trace) (err error) {
	defer workflow.Wrap(&err, "memstore.AppendTrace(%q)", t.ID)
	if err := checkID(ctx, "trace id", t.ID); err != nil {
		return err
	}
	if err := checkID(ctx, "trace workflow id", t.WorkflowID); err != nil {
		return err
	}
	encoded, err := encodeTraces(nil, []workflow.Trace{t})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live(t.WorkflowID)
	if !ok {
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", t.WorkflowID)
	}
	if err := s.checkNewTraces(encoded); err != nil {
		return err
	}
	s.appendTraces(t.WorkflowID, rec, encoded)
	return nil
}

// encodeTraces appends the stored form of ts to dst: a caller passes a
// small array of its stack, as the stored traces are only copied into the
// record's slab (no allocation for the few traces of a commit).
func encodeTraces(dst []storedTrace, ts []workflow.Trace) ([]storedTrace, error) {
	for _, t := range ts {
		stored, err := storeTrace(t)
		if err != nil {
			return nil, workflow.WrapKind(workflow.KindInvalid, err, "trace %s cannot be encoded", t.ID)
		}
		dst = append(dst, storedTrace{id: t.ID, t: stored})
	}
	return dst, nil
}

// checkNewTraces returns KindConflict when a trace of ts is stored already.
// The caller holds s.mu.
func (s *Store) checkNewTraces(ts []storedTrace) error {
	for _, t := range ts {
		if _, dup := s.traces[t.id]; dup {
			return workflow.Errorf(workflow.KindConflict, "trace %s already exists", t.id)
		}
	}
	return nil
}

// appendTraces adds ts to workflow id's record and drops the oldest traces
// beyond the cap. The caller holds s.mu.
func (s *Store) appendTraces(id string, rec *record, ts []storedTrace) {
	for i := range ts {
		rec.traces = append(rec.traces, rec.traceSlab.keep(&ts[i]))
		s.traces[ts[i].id] = id
	}
	if over := len(rec.traces) - s.traceCap; over > 0 {
		for _, old := range rec.traces[:over] {
			delete(s.traces, old.id)
		}
		// A new list: a reader may still copy from the old one.
		rec.traces = append([]*storedTrace(nil), rec.traces[over:]...)
	}
}

// Traces returns the workflow's kept traces, oldest first; KindNotFound for
// an unknown workflow.
func (s *Store) Traces(ctx context.Context, workflowID string) (_ []workflow.Trace, err error) {
	defer workflow.Wrap(&err, "memstore.Traces(%q)", workflowID)
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	rec, ok := s.live(workflowID)
	var kept []*storedTrace
	if ok {
		kept = rec.traces[:len(rec.traces):len(rec.traces)]
	}
	s.mu.RUnlock()
	if !ok {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	out := make([]workflow.Trace, len(kept))
	for i, st := range kept {
		out[i] = copyTrace(st.t)
	}
	return out, nil
}

// GetTrace returns one kept trace by id; KindNotFound when it is unknown,
// was dropped by the cap or its workflow was deleted.
func (s *Store) GetTrace(ctx context.Context, traceID string) (_ workflow.Trace, err error) {
	defer workflow.Wrap(&err, "memstore.GetTrace(%q)", traceID)
	if err := checkID(ctx, "trace id", traceID); err != nil {
		return workflow.Trace{}, err
	}
	var found *workflow.Trace
	s.mu.RLock()
	if rec, ok := s.live(s.traces[traceID]); ok {
		for i := range rec.traces {
			if rec.traces[i].id == traceID {
				found = &rec.traces[i].t
				break
			}
		}
	}
	var t workflow.Trace
	if found != nil {
		t = copyTrace(*found)
	}
	s.mu.RUnlock()
	if found == nil {
		return workflow.Trace{}, workflow.Errorf(workflow.KindNotFound, "trace %s not found", traceID)
	}
	return t, nil
}
