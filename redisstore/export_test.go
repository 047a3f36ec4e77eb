package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// PartitionOf exposes the index partition of a workflow id to the tests.
var PartitionOf = partition

// SetClock sets the clock the store's index cache reads (time.Now by
// default), for tests that move miniredis's time.
func SetClock(s *Store, now func() time.Time) { s.index.now = now }

// RefreshSlack exposes how much longer than the retention a refreshed
// owner key or listing partition lives.
var RefreshSlack = refreshSlack

// Layout is the layout of the records the store writes.
const Layout = layout

// runningFor returns the ids of userID's workflows whose stored status is
// StatusRunning, as found in userID's running set (the set the commit
// script counts for Commit.RunningLimit). It reads that set (one SMEMBERS)
// and checks its entries against their workflows' state (one pipeline, in
// the user's slot); an entry counts only when its workflow exists, is
// running and belongs to userID, and entries of workflows gone for good
// are pruned. The conformance suite checks the set through it.
func (s *Store) runningFor(ctx context.Context, userID string) (_ []string, err error) {
	defer workflow.Wrap(&err, "redisstore.runningFor(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, err
	}
	ids, err := s.rdb.SMembers(ctx, s.keys.user(userID).running).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	users := make([]string, len(ids))
	for i := range users {
		users[i] = userID
	}
	key := s.keys.user(userID).running
	return s.runningOf(ctx, ids, users, func(p redis.Pipeliner, e listed) { p.SRem(ctx, key, e.id) })
}

// RunningFor is runningFor for the external test package.
var RunningFor = (*Store).runningFor

// UnlistRunning exposes the running-set removal a commit that ends or
// pauses a round makes after its script, so a test can make it late.
func UnlistRunning(s *Store, ctx context.Context, id, userID string) error {
	return s.unlistRunning(ctx, id, userID)
}
