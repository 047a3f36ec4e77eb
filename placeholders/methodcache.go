package placeholders

import (
	"bytes"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// MethodCache renders AVAILABLE_METHODS exactly as Methods does, but parses
// each action's parameter schema once instead of on every render: it keeps
// the parameter summary per action name together with the schema bytes it
// was computed from, and recomputes it only when an action of that name
// arrives with different schema bytes (a reloaded registry). It holds at
// most one entry per action name it has seen.
//
// A MethodCache is owned by whoever renders the prompts (a mode, a prompt
// builder), never package state. It is safe for concurrent use; the zero
// value is ready to use; it must not be copied after first use.
type MethodCache struct {
	mu      sync.RWMutex
	entries map[string]paramSummary
}

// paramSummary is one action's rendered parameter summary and the schema
// it was rendered from (a private copy, so a caller changing its slice
// cannot make a stale entry look current).
type paramSummary struct {
	schema []byte
	text   string
}

// NewMethodCache returns an empty cache.
func NewMethodCache() *MethodCache { return &MethodCache{} }

// Methods returns the AVAILABLE_METHODS value for exactly the given
// actions, in the given order — the same text as the package-level
// Methods.
func (c *MethodCache) Methods(actions []workflow.ActionSpec) string {
	return renderMethods(actions, c.params)
}

// params returns a's parameter summary, from the cache when it was computed
// from the same schema bytes.
func (c *MethodCache) params(a workflow.ActionSpec) string {
	c.mu.RLock()
	e, ok := c.entries[a.Name]
	c.mu.RUnlock()
	if ok && bytes.Equal(e.schema, a.Parameters) {
		return e.text
	}
	text := paramList(a.Parameters)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[string]paramSummary)
	}
	c.entries[a.Name] = paramSummary{schema: bytes.Clone(a.Parameters), text: text}
	c.mu.Unlock()
	return text
}
