package memstore

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

var _ experiment.Store = (*Store)(nil)

// experimentBox keeps experiments in their stored form (JSON), so a
// caller never shares memory with the store. The zero value is empty.
type experimentBox struct {
	mu      sync.Mutex
	stored  map[string][]byte
	running map[string]struct{}
	stop    map[string]struct{}
	leases  map[string]lease
}

// PutExperiment stores e, replacing the experiment of its id.
func (s *Store) PutExperiment(_ context.Context, e *experiment.Experiment) error {
	b, err := json.Marshal(e)
	if err != nil {
		return workflow.WrapKind(workflow.KindInternal, err, "memstore.PutExperiment")
	}
	x := &s.exps
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stored == nil {
		x.stored, x.running = map[string][]byte{}, map[string]struct{}{}
	}
	x.stored[e.ID] = b
	if e.Status == experiment.StatusRunning {
		x.running[e.ID] = struct{}{}
	} else {
		delete(x.running, e.ID)
	}
	return nil
}

// GetExperiment returns the experiment id; KindNotFound when unknown.
func (s *Store) GetExperiment(_ context.Context, id string) (*experiment.Experiment, error) {
	x := &s.exps
	x.mu.Lock()
	b, ok := x.stored[id]
	x.mu.Unlock()
	if !ok {
		return nil, workflow.Errorf(workflow.KindNotFound, "experiment %q not found", id)
	}
	var e experiment.Experiment
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, workflow.WrapKind(workflow.KindInternal, err, "stored experiment %s is corrupt", id)
	}
	return &e, nil
}

// RunningExperiments returns the ids of the experiments stored running.
func (s *Store) RunningExperiments(context.Context) ([]string, error) {
	x := &s.exps
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]string, 0, len(x.running))
	for id := range x.running {
		out = append(out, id)
	}
	return out, nil
}

// RequestStop records that the experiment id is asked to stop.
func (s *Store) RequestStop(_ context.Context, id string) error {
	x := &s.exps
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stop == nil {
		x.stop = map[string]struct{}{}
	}
	x.stop[id] = struct{}{}
	return nil
}

// Stopping reports whether the experiment id was asked to stop.
func (s *Store) Stopping(_ context.Context, id string) (bool, error) {
	x := &s.exps
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.stop[id]
	return ok, nil
}

// ClaimExperiment takes or renews owner's lease on the experiment id
// until ttl passes; false while another owner's lease runs.
func (s *Store) ClaimExperiment(_ context.Context, id, owner string, ttl time.Duration) (bool, error) {
	x := &s.exps
	now := s.now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.leases == nil {
		x.leases = map[string]lease{}
	}
	if l, ok := x.leases[id]; ok && l.owner != owner && now.Before(l.expires) {
		return false, nil
	}
	x.leases[id] = lease{owner: owner, expires: now.Add(ttl)}
	return true, nil
}
