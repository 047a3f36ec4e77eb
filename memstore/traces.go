package memstore

import (
	"context"
	"encoding/json"

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
	stored, err := storeTraces([]workflow.Trace{t}, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live(t.WorkflowID)
	if !ok {
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", t.WorkflowID)
	}
	if err := s.checkNewTraces(stored); err != nil {
		return err
	}
	s.appendTraces(t.WorkflowID, rec, stored)
	return nil
}

// storeTraces returns ts to be copied into the record's slab, deep copies
// unless they are handed over (workflow.Commit.Handover), or KindInvalid
// for a trace the Redis store could not encode either: its parsed outcome
// not JSON, or its time outside years 0–9999 (the only values of a Trace
// json.Marshal refuses).
func storeTraces(ts []workflow.Trace, handover bool) ([]storedTrace, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	stored := make([]storedTrace, len(ts))
	for i, t := range ts {
		if len(t.Parsed) > 0 && !json.Valid(t.Parsed) {
			return nil, workflow.Errorf(workflow.KindInvalid, "trace %s cannot be encoded: its parsed outcome is not JSON", t.ID)
		}
		if y := t.CreatedAt.Year(); y < 0 || y > 9999 {
			return nil, workflow.Errorf(workflow.KindInvalid, "trace %s cannot be encoded: its time %v is outside years 0-9999", t.ID, t.CreatedAt)
		}
		stored[i] = storedTrace{id: t.ID, t: t}
		if !handover {
			own(&stored[i].t)
		}
	}
	return stored, nil
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
		out[i] = st.t
		own(&out[i])
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
		t = *found
		own(&t)
	}
	s.mu.RUnlock()
	if found == nil {
		return workflow.Trace{}, workflow.Errorf(workflow.KindNotFound, "trace %s not found", traceID)
	}
	return t, nil
}
