package placeholders

import (
	"bytes"

	"github.com/twostep/twostep/workflow"
)

// paramSummary is one action's rendered parameter summary and the schema
// it was rendered from (a private copy, so a caller changing its slice
// cannot make a stale entry look current).
type paramSummary struct {
	schema []byte
	text   string
}

// params returns a's parameter summary (paramList), from the cache when it
// was computed from the same schema bytes (a reloaded registry may bring
// another schema under the same name).
func (c *Cache) params(a workflow.ActionSpec) string {
	if c == nil {
		return paramList(a.Parameters)
	}
	if e, ok := c.methods.Get(a.Name); ok && bytes.Equal(e.schema, a.Parameters) {
		return e.text
	}
	text := paramList(a.Parameters)
	c.methods.Put(a.Name, paramSummary{schema: bytes.Clone(a.Parameters), text: text})
	return text
}
