package redisstore

import (
	"sync"
	"time"
)

// A commit used to send, besides its script, the same index writes every
// time: PEXPIREs of the workflow's owner key and of its admin-listing
// partition (so each outlives the workflows it names) and, while the
// workflow runs, the SADD of its store-wide running-set entry. A step
// commits three times, so those were 9 of the step's commands, each
// costing the client and redis-server as much as a small script call.
// indexCache remembers, per process, what needs no repeating:
//
//   - TTLs: a refresh sets the key's TTL to Retention plus a slack
//     (refreshSlack) and is skipped while less than the slack has passed.
//     The commit script sets the workflow's own keys to Retention from
//     the commit's time T; a key refreshed at T0 > T-slack expires at
//     T0+Retention+slack > T+Retention, after them.
//   - The running-set entry: added by the first commit of a round that
//     holds a fence, skipped by that round's later commits for up to
//     runningRefresh, then added again. Only a commit that ends the round
//     (or a delete, or the recovery scan pruning a workflow that is gone)
//     removes the entry, and the next round has a new fence. Commits
//     without a fence (the API's) always add it. The periodic re-add
//     brings back an entry lost another way (a failover of its shard that
//     lost the write) within runningRefresh, as the next commit did when
//     every commit sent it.
//
// A create always refreshes both TTLs: its owner key was just claimed with
// the bare retention (perhaps after a delete on another instance, whose
// cache this one does not see), and its ZADDNX may have made the listing
// partition anew without a TTL. Only the writes that succeeded are
// remembered, and nothing for a commit that failed. Each map is cleared
// when it reaches indexCacheSize: the cost of forgetting is one repeated
// command.
type indexCache struct {
	mu      sync.Mutex
	now     func() time.Time        // time.Now; tests move it with miniredis
	expires map[string]time.Time    // key -> when its TTL was last refreshed
	running map[string]runningEntry // workflow id -> the round that added its entry
}

// runningEntry is the fence of the round that added a workflow's running
// entry, and when.
type runningEntry struct {
	fence int64
	at    time.Time
}

// runningRefresh is how long a round's commits go without adding its
// running entry again.
const runningRefresh = 5 * time.Second

// indexCacheSize bounds each of indexCache's maps.
const indexCacheSize = 1 << 15

// refreshSlack is how much longer than the retention a refreshed owner key
// or listing partition lives: an eighth of the retention, at most ten
// minutes (at least one millisecond, PEXPIRE's unit).
func refreshSlack(retention time.Duration) time.Duration {
	return max(min(retention/8, 10*time.Minute), time.Millisecond)
}

// stale returns the keys among keys whose TTL is due for a refresh.
func (c *indexCache) stale(slack time.Duration, keys ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	due := keys[:0:0]
	for _, k := range keys {
		if at, ok := c.expires[k]; !ok || now.Sub(at) >= slack || now.Before(at) {
			due = append(due, k)
		}
	}
	return due
}

// refreshed records that keys had their TTL refreshed no earlier than at
// (a time taken before the commit started).
func (c *indexCache) refreshed(at time.Time, keys []string) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expires == nil || len(c.expires)+len(keys) > indexCacheSize {
		c.expires = make(map[string]time.Time)
	}
	for _, k := range keys {
		c.expires[k] = at
	}
}

// listedRunning reports whether the round holding fence added id's
// running-set entry already.
func (c *indexCache) listedRunning(id string, fence int64) bool {
	if fence == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.running[id]
	if !ok || l.fence != fence {
		return false
	}
	d := c.clock().Sub(l.at)
	return d >= 0 && d < runningRefresh
}

// setRunning records that the round holding fence added id's entry.
func (c *indexCache) setRunning(id string, fence int64) {
	if fence == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == nil || len(c.running) >= indexCacheSize {
		c.running = make(map[string]runningEntry)
	}
	c.running[id] = runningEntry{fence: fence, at: c.clock()}
}

// unlisted forgets id's entry: it was removed, or may have been.
func (c *indexCache) unlisted(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
}

// deleted forgets what is remembered of workflow id, whose owner key is
// ownerKey: a workflow created again with the id (a caller choosing ids)
// starts with a new owner key and a new entry.
func (c *indexCache) deleted(id, ownerKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
	delete(c.expires, ownerKey)
}

// clock is c.now, or time.Now. The caller holds c.mu or needs no lock.
func (c *indexCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
