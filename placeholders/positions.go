package placeholders

import (
	"sync"

	"github.com/twostep/twostep/workflow"
)

// positions remembers, for one workflow, the cached entry of each of its
// messages by the message's index in the workflow's message slice (seq
// order, as a run and the store hand it out). A render finds the entries
// it showed on the previous step at the same indexes, without hashing
// each message ID and taking the entry cache's lock per entry: the
// per-step cost of the history is one lookup per render plus a content
// check per entry it reads.
//
// A Cache keeps positions by workflow ID, each costing the number of
// positions it holds (each may keep an entry alive), so the positions
// kept refer to about 2 × maxCachedEntries entries at most, unless one
// workflow alone has more messages than that. Like the entry cache they
// only memoize: an entry is served from them only when every field it is
// rendered from is unchanged (sameEntrySource).
type positions struct {
	cache *Cache // the cache that keeps them
	id    string // the workflow's ID

	mu sync.Mutex // held by one render at a time
	at []*cachedEntry
	// block is the summary block rendered last (see summaryBlock).
	block renderedBlock
}

// renderedBlock is a rendered summary block and what it was rendered
// from.
type renderedBlock struct {
	text               string // the summary's text
	round, step, limit int
	block              string // "" until one is rendered
}

// lockPositions returns the positions of msgs' workflow (msgs' last
// message's WorkflowID), locked for one render until unlock; nil (entries
// come from the entry cache alone) without a cache or for messages
// without a workflow ID.
func (c *Cache) lockPositions(msgs []workflow.Message) *positions {
	if c == nil || len(msgs) == 0 || msgs[len(msgs)-1].WorkflowID == "" {
		return nil
	}
	id := msgs[len(msgs)-1].WorkflowID
	p, ok := c.positions.Get(id)
	if !ok {
		p = &positions{cache: c, id: id, at: make([]*cachedEntry, 0, len(msgs))}
		c.positions.Put(id, p)
	}
	p.mu.Lock()
	return p
}

// unlock releases positions taken by lockPositions (nil: nothing).
func (p *positions) unlock() {
	if p != nil {
		p.mu.Unlock()
	}
}

// entryAt returns the history entry of msgs[i], msgs being the messages p
// was locked for (nil p: from the entry cache alone).
func (c *Cache) entryAt(p *positions, msgs []workflow.Message, i int) entry {
	m := &msgs[i]
	if p == nil {
		return c.renderedEntry(m)
	}
	if i < len(p.at) {
		if ce := p.at[i]; ce != nil && sameEntrySource(&ce.src, m) {
			return ce.entry
		}
	}
	e, ce := c.cachedEntryOf(m)
	if ce == nil { // not cached: rendered for this read only
		return e
	}
	if i >= len(p.at) {
		c.positions.AddCost(p.id, i+1-len(p.at))
		p.at = append(p.at, make([]*cachedEntry, i+1-len(p.at))...)
	}
	p.at[i] = ce
	return e
}

// summaryBlock renders the summary prev as the history's oldest entry in
// at most limit runes: a heading naming the last step it covers, then its
// text fenced as data (it was written from action results). It is
// rendered again only when the summary's text, the step it covers
// through or the limit changed since the last render for the workflow
// (nil p: rendered every time).
func (p *positions) summaryBlock(prev *workflow.Message, msgs []workflow.Message, limit int) string {
	round, step := coveredThrough(prev, msgs)
	if p == nil {
		return renderSummaryBlock(prev.Text, round, step, limit)
	}
	b := &p.block
	if b.block == "" || b.text != prev.Text || b.round != round || b.step != step || b.limit != limit {
		*b = renderedBlock{text: prev.Text, round: round, step: step, limit: limit,
			block: renderSummaryBlock(prev.Text, round, step, limit)}
	}
	return b.block
}
