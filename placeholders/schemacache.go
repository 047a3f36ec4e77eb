package placeholders

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// maxCachedStageTwo bounds each generation of the Stage 2 schema cache
// (one entry per action and set of fields Stage 1 asked for).
const maxCachedStageTwo = 1024

// stageTwoCut is the Stage 2 cut of an action's schema for one set of
// asked fields: PARAMETERS_SCHEMA's text and the names it shows.
type stageTwoCut struct {
	params []byte // the action's registered schema it was cut from
	text   string
	names  []string
}

// stageTwoCache keeps Stage 2 cuts by action name and asked fields, so a
// Stage 2 render and the parsing of its reply do not decode and re-encode
// the action's schema on every attempt. A hit also needs the action's
// registered schema to be byte-for-byte the one the cut was made from.
type stageTwoCache struct {
	mu       sync.Mutex
	cur, old map[string]*stageTwoCut
}

var stageTwoCuts stageTwoCache

// stageTwoKey identifies an action and the fields Stage 1 asked for:
// everything a cut depends on besides the action's schema.
func stageTwoKey(buf []byte, action workflow.ActionSpec, fields []workflow.FieldSpec) []byte {
	buf = append(buf, action.Name...)
	for _, f := range fields {
		buf = append(buf, 0)
		buf = append(buf, f.Name...)
		buf = append(buf, 0)
		buf = append(buf, f.Type...)
		buf = append(buf, 0)
		buf = append(buf, f.Description...)
		buf = append(buf, 0)
		buf = strconv.AppendBool(buf, f.Required)
	}
	return buf
}

// cachedStageTwo returns the cut of action's schema for fields, from the
// cache when it was made before from the same schema. Its names must not
// be modified.
func cachedStageTwo(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, []string, error) {
	var stack [256]byte
	key := stageTwoKey(stack[:0], action, fields)
	c := &stageTwoCuts
	c.mu.Lock()
	cut, ok := c.cur[string(key)]
	if !ok {
		if cut, ok = c.old[string(key)]; ok {
			c.putLocked(string(key), cut)
		}
	}
	c.mu.Unlock()
	if ok && bytes.Equal(cut.params, action.Parameters) {
		return cut.text, cut.names, nil
	}
	text, names, err := stageTwoSchemaFields(action, fields)
	if err != nil {
		return "", nil, err
	}
	cut = &stageTwoCut{params: bytes.Clone(action.Parameters), text: text, names: names}
	c.mu.Lock()
	c.putLocked(string(key), cut)
	c.mu.Unlock()
	return text, names, nil
}

func (c *stageTwoCache) putLocked(key string, cut *stageTwoCut) {
	if c.cur == nil || len(c.cur) >= maxCachedStageTwo {
		c.old, c.cur = c.cur, make(map[string]*stageTwoCut)
	}
	c.cur[key] = cut
}
