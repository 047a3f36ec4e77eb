// Package boundedcache is the project's one memoizing cache: a map
// bounded in two generations, safe for concurrent use.
//
// A Cache is owned by the value that memoizes with it (a prompt builder,
// a mode), created in that value's constructor; the project keeps no
// cache in package-level state. It only memoizes: a caller checks that a
// hit is still current (the value it was made from is unchanged) before
// using it, so a dropped entry costs a recomputation, never a wrong answer.
//
// Entries go into the newer generation. When the newer generation is full
// (maxLen entries, or a total cost of maxCost, given to New), the older one is dropped
// and the newer takes its place; a hit in the older generation moves the
// entry back into the newer one, so entries still in use survive the
// turnover. A Cache therefore holds at most 2 × maxLen entries; its
// total cost stays within 2 × (maxCost + the largest entry's cost)
// (an entry that grows with AddCost may pass it until the next Put turns
// the generations over).
package boundedcache

import "sync"

// Cache is a bounded map from K to V in two generations (see the package
// comment). Its methods are safe for concurrent use; the values it holds
// are shared with every caller that gets them, so they must not be
// modified after Put.
type Cache[K comparable, V any] struct {
	maxLen, maxCost int

	mu       sync.Mutex
	cur, old map[K]item[K, V]
	cost     int // total cost of cur's items
}

// item is one cached value with its key (so a promotion from the older
// generation stores the key already held, and a lookup's key never
// escapes) and its cost.
type item[K comparable, V any] struct {
	key  K
	val  V
	cost int
}

// New returns an empty Cache keeping at most maxLen entries per
// generation, and at most maxCost of cost per generation when maxCost > 0
// (see Put and AddCost); maxLen < 1 is taken as 1.
func New[K comparable, V any](maxLen, maxCost int) *Cache[K, V] {
	return &Cache[K, V]{maxLen: max(maxLen, 1), maxCost: maxCost}
}

// Get returns the value cached for k, moving it into the newer generation
// when it was found in the older one.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.cur[k]; ok {
		return it.val, true
	}
	it, ok := c.old[k]
	if ok {
		delete(c.old, k)
		c.putLocked(it)
	}
	return it.val, ok
}

// GetBytes is Get for a Cache keyed by strings, with the key given as
// bytes: the lookup does not allocate a string (the builder of a key
// keeps it on its stack).
func GetBytes[V any](c *Cache[string, V], k []byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.cur[string(k)]; ok {
		return it.val, true
	}
	it, ok := c.old[string(k)]
	if ok {
		delete(c.old, it.key)
		c.putLocked(it)
	}
	return it.val, ok
}

// Put caches v for k in the newer generation, with no cost, replacing
// what was cached for k; AddCost gives the entry its cost (bytes,
// references it keeps alive: whatever unit the owner bounds with maxCost).
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.cur[k]; ok {
		c.cost -= it.cost
		delete(c.cur, k)
	}
	delete(c.old, k)
	c.putLocked(item[K, V]{key: k, val: v})
}

// AddCost adds n to the cost of k's entry (an entry that grew); nothing
// when k is not cached.
func (c *Cache[K, V]) AddCost(k K, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.cur[k]; ok {
		it.cost += n
		c.cur[k] = it
		c.cost += n
	} else if it, ok := c.old[k]; ok {
		it.cost += n
		c.old[k] = it
	}
}

// Len returns the number of entries held, in both generations.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// Cost returns the total cost of the entries held, in both generations.
func (c *Cache[K, V]) Cost() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.cost
	for _, it := range c.old {
		n += it.cost
	}
	return n
}

// putLocked stores it in the newer generation, turning the generations
// over first when the newer one is full.
func (c *Cache[K, V]) putLocked(it item[K, V]) {
	if c.cur == nil || len(c.cur) >= c.maxLen || (c.maxCost > 0 && c.cost >= c.maxCost) {
		c.old, c.cur, c.cost = c.cur, make(map[K]item[K, V], min(c.maxLen, 64)), 0
	}
	c.cur[it.key] = it
	c.cost += it.cost
}
