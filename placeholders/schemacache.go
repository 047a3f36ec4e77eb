package placeholders

import (
	"bytes"
	"strconv"

	"github.com/twostep/twostep/boundedcache"
	"github.com/twostep/twostep/workflow"
)

// stageTwoCut is the Stage 2 cut of an action's schema for one set of
// asked fields: PARAMETERS_SCHEMA's text and the names it shows.
type stageTwoCut struct {
	params []byte // the action's registered schema it was cut from
	text   string
	names  []string
}

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
		buf = append(buf, f.Items...)
		buf = append(buf, 0)
		buf = append(buf, f.Description...)
		buf = append(buf, 0)
		buf = strconv.AppendBool(buf, f.Required)
	}
	return buf
}

// stageTwoCut returns the cut of action's schema for fields, from c when
// it was made before from the same schema bytes (a Stage 2 render and the
// parsing of its reply do not decode and re-encode the action's schema on
// every attempt). Its names must not be modified.
func (c *Cache) stageTwoCut(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, []string, error) {
	if c == nil {
		return stageTwoSchemaFields(action, fields)
	}
	var stack [256]byte
	key := stageTwoKey(stack[:0], action, fields)
	if cut, ok := boundedcache.GetBytes(c.stageTwo, key); ok && bytes.Equal(cut.params, action.Parameters) {
		return cut.text, cut.names, nil
	}
	text, names, err := stageTwoSchemaFields(action, fields)
	if err != nil {
		return "", nil, err
	}
	c.stageTwo.Put(string(key), &stageTwoCut{params: bytes.Clone(action.Parameters), text: text, names: names})
	return text, names, nil
}
