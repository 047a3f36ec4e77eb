package prompts

import (
	"sync"

	"github.com/twostep/twostep/workflow"
)

// maxCachedStage1Schemas bounds the Stage 1 schema cache; beyond it the
// cache starts afresh (one entry per distinct set of actions and
// connection labels: the registry is fixed, so about one per user).
const maxCachedStage1Schemas = 1024

// stage1Cache keeps Stage1Output's results by the offered action names and
// the user's connection labels, which are all a Stage 1 schema depends on.
type stage1Cache struct {
	mu      sync.Mutex
	entries map[string]workflow.OutputSchema
}

// Stage1Output returns the Stage 1 output schema for actions and conns
// (the package-level Stage1Output), cached: a Stage 1 call of the same
// user with the same registry gets the same schema without rebuilding it.
// The returned schema must not be modified.
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
	c := &b.stage1
	c.mu.Lock()
	out, ok := c.entries[string(key)] // looked up without allocating the key
	c.mu.Unlock()
	if ok {
		return out
	}
	out = Stage1Output(actions, conns)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedStage1Schemas {
		c.entries = map[string]workflow.OutputSchema{}
	}
	c.entries[string(key)] = out
	return out
}

// maxCachedStage2Outputs bounds the Stage 2 output schema cache; beyond it
// the cache starts afresh.
const maxCachedStage2Outputs = 1024

// stage2Cache keeps the Stage 2 output schemas (stage2Output) by action
// name and PARAMETERS_SCHEMA text, which are all one depends on (the text
// shows exactly the names, in order).
type stage2Cache struct {
	mu      sync.Mutex
	entries map[stage2Key]Stage2Output
}

type stage2Key struct{ action, text string }

// stage2Output is the package-level stage2Output, cached. The returned
// schema must not be modified.
func (b *Builder) stage2Output(action workflow.ActionSpec, text string, names []string) (Stage2Output, error) {
	k := stage2Key{action.Name, text}
	c := &b.stage2
	c.mu.Lock()
	out, ok := c.entries[k]
	c.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := stage2Output(action, text, names)
	if err != nil {
		return out, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedStage2Outputs {
		c.entries = map[stage2Key]Stage2Output{}
	}
	c.entries[k] = out
	return out, nil
}
