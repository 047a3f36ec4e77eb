package placeholders

import (
	"sync"

	"github.com/twostep/twostep/workflow"
)

// maxPositionedWorkflows bounds each generation of the position cache in
// workflows (the entry cache's maxCachedEntries bounds it in positions).
const maxPositionedWorkflows = 1024

// positions remembers, for one workflow, the cached entry of each of its
// messages by the message's index in the workflow's message slice (seq
// order, as a run and the store hand it out). A render finds the entries
// it showed on the previous step at the same indexes, without hashing
// each message ID and taking the process-wide cache's lock per entry:
// the per-step cost of the history is one lookup per render plus a
// content check per entry it reads.
type positions struct {
	mu sync.Mutex // held by one render at a time
	at []*cachedEntry
	// refs is len(at) as counted in the cache's generations, kept under
	// positionCache.mu (at itself is guarded by mu, which get cannot take).
	refs int
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

// positionCache keeps positions by workflow ID in two generations, like
// the entry cache: when the newer one holds too many workflows or refers
// to too many entries, the older is dropped and the newer takes its place.
// Its positions refer only to entries the entry cache rendered, and it
// holds about 2 × maxCachedEntries positions at most, unless one
// workflow alone has more messages than that: its positions are kept
// (and every lookup turns the generations over) while it is rendered.
type positionCache struct {
	mu       sync.Mutex
	cur, old map[string]*positions
	refs     int // positions in the newer generation (each may refer to an entry)
}

// positioned is the process's position cache. Like the entry cache it
// only memoizes: an entry is served from it only when every field it is
// rendered from is unchanged (sameEntrySource).
var positioned positionCache

// lockPositions returns the positions of msgs' workflow (msgs' last
// message's WorkflowID), locked for one render until unlock; nil (entries
// come from the entry cache alone) for messages without a workflow ID.
func lockPositions(msgs []workflow.Message) *positions {
	if len(msgs) == 0 || msgs[len(msgs)-1].WorkflowID == "" {
		return nil
	}
	p := positioned.get(msgs[len(msgs)-1].WorkflowID, len(msgs))
	p.mu.Lock()
	return p
}

// unlock releases positions taken by lockPositions (nil: nothing).
func (p *positions) unlock() {
	if p != nil {
		p.mu.Unlock()
	}
}

// entry returns the history entry of msgs[i], msgs being the messages p
// was locked for (nil p: from the entry cache alone).
func (p *positions) entry(msgs []workflow.Message, i int) entry {
	m := &msgs[i]
	if p == nil {
		return renderedEntry(m)
	}
	if i < len(p.at) {
		if ce := p.at[i]; ce != nil && sameEntrySource(&ce.src, m) {
			return ce.entry
		}
	}
	e, ce := cachedEntryOf(m)
	if ce == nil { // not cached: rendered for this read only
		return e
	}
	if i >= len(p.at) {
		positioned.addRefs(p, i+1-len(p.at))
		p.at = append(p.at, make([]*cachedEntry, i+1-len(p.at))...)
	}
	p.at[i] = ce
	return e
}

// get returns id's positions (new ones with room for n messages), in the
// newer generation.
func (c *positionCache) get(id string, n int) *positions {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || len(c.cur) >= maxPositionedWorkflows || c.refs >= maxCachedEntries {
		c.old, c.cur, c.refs = c.cur, make(map[string]*positions), 0
	}
	if p, ok := c.cur[id]; ok {
		return p
	}
	p, ok := c.old[id]
	if ok {
		c.refs += p.refs // still in use: kept over the turnover
	} else {
		p = &positions{at: make([]*cachedEntry, 0, n)}
	}
	c.cur[id] = p
	return p
}

// addRefs counts n more positions of p (each may refer to an entry).
func (c *positionCache) addRefs(p *positions, n int) {
	c.mu.Lock()
	c.refs += n
	p.refs += n
	c.mu.Unlock()
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
