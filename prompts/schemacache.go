package prompts

import (
	"github.com/twostep/twostep/boundedcache"
	"github.com/twostep/twostep/workflow"
)

// maxCachedStage1Schemas bounds each generation of the Stage 1 schema
// cache (one entry per distinct set of actions and connection labels: the
// registry is fixed, so about one per user).
const maxCachedStage1Schemas = 1024

// maxCachedStage2Outputs bounds each generation of the Stage 2 output
// schema cache.
const maxCachedStage2Outputs = 1024

// Stage1Output returns the Stage 1 output schema for actions and conns
// (the package-level Stage1Output), cached by the offered action names
// and the user's connection labels, which are all a Stage 1 schema
// depends on: a Stage 1 call of the same user with the same registry gets
// the same schema without rebuilding it. The returned schema must not be
// modified.
func (b *Builder) Stage1Output(actions []workflow.ActionSpec, conns []workflow.Connection) workflow.OutputSchema {
	var stack [1024]byte // the key is built on the stack for registries of usual size
	key := stack[:0]
	for _, a := range actions {
		key = append(key, a.Name...)
		key = append(key, 0)
	}
	key = append(key, 1)
	for _, c := range conns {
		key = append(key, c.Label...)
		key = append(key, 0)
	}
	if out, ok := boundedcache.GetBytes(b.stage1, key); ok {
		return out
	}
	out := Stage1Output(actions, conns)
	b.stage1.Put(string(key), out)
	return out
}

// stage2Key identifies a Stage 2 output schema: the action's name and
// PARAMETERS_SCHEMA's text, which are all one depends on (the text shows
// exactly the names, in order).
type stage2Key struct{ action, text string }

// stage2Output is the package-level stage2Output, cached. The returned
// schema must not be modified.
func (b *Builder) stage2Output(action workflow.ActionSpec, text string, names []string) (Stage2Output, error) {
	k := stage2Key{action.Name, text}
	if out, ok := b.stage2.Get(k); ok {
		return out, nil
	}
	out, err := stage2Output(action, text, names)
	if err != nil {
		return out, err
	}
	b.stage2.Put(k, out)
	return out, nil
}
