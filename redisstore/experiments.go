package redisstore

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

var _ experiment.Store = (*Store)(nil)

// Experiments (experiment.Store) live in their own hash slot each, so a
// cluster spreads them, with one store-wide index:
//
//	twostep:{x:<id>}:exp         the experiment's JSON
//	twostep:{x:<id>}:stop        set when a stop was asked
//	twostep:{x:<id>}:lease       the owner running it (PX = lease ttl)
//	twostep:experiments:running  set of the ids of running experiments
//
// Every command touches one key, so none spans slots. With a Retention,
// an experiment's keys expire a Retention after its last write.

// experimentID is what an experiment id looks like: anything else is an
// unknown experiment, never a key.
var experimentID = regexp.MustCompile(`^` + experiment.PrefixExperiment + `[0-9a-z]{1,40}$`)

func (s *Store) experimentKey(id, name string) string {
	return s.keys.prefix + ":{x:" + id + "}:" + name
}

func (s *Store) runningExperiments() string { return s.keys.prefix + ":experiments:running" }

// PutExperiment stores e and keeps the running index: SET, then SADD or
// SREM (an index entry whose experiment is gone or finished is dropped by
// RunningExperiments' readers: the runner checks the status it reads).
func (s *Store) PutExperiment(ctx context.Context, e *experiment.Experiment) (err error) {
	defer workflow.Wrap(&err, "redisstore.PutExperiment(%q)", e.ID)
	if !experimentID.MatchString(e.ID) {
		return workflow.Errorf(workflow.KindInvalid, "experiment id %q is malformed", e.ID)
	}
	b, err := encodeRecord(experimentRecord{layout, e}, "experiment", e.ID)
	if err != nil {
		return err
	}
	if err := s.rdb.Set(ctx, s.experimentKey(e.ID, "exp"), b, s.opts.Retention).Err(); err != nil {
		return redisErr(err)
	}
	if e.Status == experiment.StatusRunning {
		err = s.rdb.SAdd(ctx, s.runningExperiments(), e.ID).Err()
	} else {
		err = s.rdb.SRem(ctx, s.runningExperiments(), e.ID).Err()
	}
	return redisErr(err)
}

// GetExperiment returns the experiment id (KindNotFound when unknown).
func (s *Store) GetExperiment(ctx context.Context, id string) (_ *experiment.Experiment, err error) {
	defer workflow.Wrap(&err, "redisstore.GetExperiment(%q)", id)
	notFound := workflow.Errorf(workflow.KindNotFound, "experiment %q not found", id)
	if !experimentID.MatchString(id) {
		return nil, notFound
	}
	b, err := s.rdb.Get(ctx, s.experimentKey(id, "exp")).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, notFound
	}
	if err != nil {
		return nil, redisErr(err)
	}
	var e experiment.Experiment
	rec := experimentRecord{Experiment: &e}
	if err := decodeRecord(b, &rec, &rec.Layout, "experiment"); err != nil {
		return nil, err
	}
	return &e, nil
}

// RunningExperiments returns the ids in the running index, leaving out
// (and dropping) those whose experiment expired.
func (s *Store) RunningExperiments(ctx context.Context) (_ []string, err error) {
	defer workflow.Wrap(&err, "redisstore.RunningExperiments")
	ids, err := s.rdb.SMembers(ctx, s.runningExperiments()).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	out := ids[:0]
	for _, id := range ids {
		n, err := s.rdb.Exists(ctx, s.experimentKey(id, "exp")).Result()
		if err != nil {
			return nil, redisErr(err)
		}
		if n == 0 {
			s.rdb.SRem(ctx, s.runningExperiments(), id)
			continue
		}
		out = append(out, id)
	}
	return out, nil
}

// RequestStop marks the experiment as asked to stop.
func (s *Store) RequestStop(ctx context.Context, id string) (err error) {
	defer workflow.Wrap(&err, "redisstore.RequestStop(%q)", id)
	if !experimentID.MatchString(id) {
		return workflow.Errorf(workflow.KindNotFound, "experiment %q not found", id)
	}
	return redisErr(s.rdb.Set(ctx, s.experimentKey(id, "stop"), "1", s.opts.Retention).Err())
}

// Stopping reports whether a stop was asked.
func (s *Store) Stopping(ctx context.Context, id string) (_ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.Stopping(%q)", id)
	if !experimentID.MatchString(id) {
		return false, nil
	}
	n, err := s.rdb.Exists(ctx, s.experimentKey(id, "stop")).Result()
	return n > 0, redisErr(err)
}

// experimentClaimScript takes the lease KEYS[1] for owner ARGV[1] for
// ARGV[2] ms when it is free or owner's already: 1, else 0.
var experimentClaimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// ClaimExperiment takes or renews owner's lease on the experiment.
func (s *Store) ClaimExperiment(ctx context.Context, id, owner string, ttl time.Duration) (_ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimExperiment(%q, %q)", id, owner)
	if !experimentID.MatchString(id) {
		return false, workflow.Errorf(workflow.KindNotFound, "experiment %q not found", id)
	}
	if ttl < time.Millisecond || owner == "" {
		return false, workflow.Errorf(workflow.KindInvalid, "a lease needs an owner and a ttl of 1 ms or more")
	}
	n, err := experimentClaimScript.Run(ctx, s.rdb, []string{s.experimentKey(id, "lease")}, owner, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, redisErr(err)
	}
	return n == 1, nil
}
