package engine

import (
	"time"
)

// read receives partition p's entries while a worker here is free, one at
// a time, and offers each to the workers. A failing dispatcher (the store
// is unreachable) is retried with capped backoff, logged once per outage.
func (r *runner) read(p int) {
	var failing time.Duration
	for r.waitRoom() {
		d, ok, err := r.d.Receive(r.recv, r.e.cfg.InstanceID, p)
		if r.recv.Err() != nil && !ok {
			return
		}
		if err != nil {
			if failing == 0 {
				r.e.log.Warn().Int("partition", p).AnErr("err", err).Msg("receiving dispatched rounds failed; retrying")
			}
			failing = min(max(2*failing, 100*time.Millisecond), 5*time.Second)
			t := time.NewTimer(failing)
			select {
			case <-r.recv.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if failing > 0 {
			r.e.log.Info().Int("partition", p).Msg("receiving dispatched rounds again")
			failing = 0
		}
		if ok {
			r.offer(d)
		}
	}
}

// waitRoom blocks until a worker is free; false once the runner closed.
func (r *runner) waitRoom() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.closed && r.freeLocked() <= 0 {
		r.room.Wait()
	}
	return !r.closed
}

// reclaimLoop takes over, every ReclaimInterval and as far as workers are
// free, the entries other consumers left untouched for a LeaseTTL: their
// instance died (its lease has expired by then too, as leases and entries
// are renewed together) or left them because the round was held elsewhere.
// With every worker busy it takes nothing (it could not run it), which
// delays takeovers past LeaseTTL + ReclaimInterval; it logs that at debug
// level, once per busy spell.
func (r *runner) reclaimLoop() {
	t := time.NewTicker(r.e.cfg.ReclaimInterval)
	defer t.Stop()
	failing := false // log a failure once per outage
	busy := false    // log a busy spell once
	for {
		select {
		case <-r.recv.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		free := r.freeLocked()
		r.mu.Unlock()
		if free <= 0 {
			if !busy {
				r.e.log.Debug().Int("workers", r.e.cfg.Workers).Msg("reclaim put off: every worker is busy")
			}
			busy = true
			continue
		}
		busy = false
		ds, err := r.d.Reclaim(r.recv, r.e.cfg.InstanceID, r.e.cfg.LeaseTTL, free)
		if err != nil {
			if r.recv.Err() == nil && !failing {
				r.e.log.Warn().AnErr("err", err).Msg("reclaiming dispatched rounds failed; retrying every interval")
			}
			failing = true
			continue
		}
		failing = false
		for _, d := range ds {
			r.offer(d)
		}
	}
}
