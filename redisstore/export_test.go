package redisstore

import "time"

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
