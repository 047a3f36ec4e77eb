package placeholders

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// registry returns n actions with schemas of a realistic size: a few
// required and optional properties with descriptions, enums and nesting.
func registry(n int) []workflow.ActionSpec {
	out := make([]workflow.ActionSpec, n)
	for i := range out {
		props := map[string]any{
			"query":    map[string]any{"type": "string", "description": "what to look for in the documents, in plain words"},
			"language": map[string]any{"type": "string", "enum": []string{"en", "de", "fr", "it"}, "description": "output language"},
			"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "how many results"},
			"options": map[string]any{"type": "object", "description": "fine tuning", "properties": map[string]any{
				"strict": map[string]any{"type": "boolean"}, "fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}},
			"format": map[string]any{"type": []string{"string", "null"}, "description": "the output format"},
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"query", "language"}, "properties": props})
		out[i] = workflow.ActionSpec{
			Name: fmt.Sprintf("method%d.action%d", i/4, i), Description: "Does thing number " + fmt.Sprint(i) + " to the documents.",
			Parameters: schema, Effect: workflow.EffectRead, Documents: workflow.DocumentsOptional,
		}
	}
	return out
}

// The cache renders exactly what Methods renders, for the whole list, a
// subset in another order, an empty list and actions without schemas.
func TestMethodCacheMatchesMethods(t *testing.T) {
	t.Parallel()
	all := registry(12)
	all[3].Parameters = nil
	all[5].Parameters = json.RawMessage(`not json`)
	subset := []workflow.ActionSpec{all[7], all[2], all[3]}
	c := NewCache()
	tests := []struct {
		name    string
		actions []workflow.ActionSpec
	}{
		{"all", all},
		{"all again, from the cache", all},
		{"subset", subset},
		{"none", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := c.Methods(tc.actions), Methods(tc.actions); got != want {
				t.Errorf("cached =\n%s\nwant\n%s", got, want)
			}
		})
	}
	if n := c.methods.Len(); n != len(all) {
		t.Errorf("cache holds %d entries, want one per action (%d)", n, len(all))
	}
}

// An action whose schema changed under the same name (a reloaded registry)
// is summarised from the new schema; a caller changing its schema slice
// after a render cannot make the stale summary look current.
func TestMethodCacheFollowsSchemaChanges(t *testing.T) {
	t.Parallel()
	c := NewCache()
	a := workflow.ActionSpec{Name: "doc.search", Parameters: json.RawMessage(`{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}`)}
	if got := c.Methods([]workflow.ActionSpec{a}); !strings.Contains(got, "q (required, string)") {
		t.Fatalf("first render = %q", got)
	}
	a.Parameters = json.RawMessage(`{"type":"object","properties":{"q":{"type":"number"},"page":{"type":"integer"}}}`)
	if got, want := c.Methods([]workflow.ActionSpec{a}), Methods([]workflow.ActionSpec{a}); got != want || !strings.Contains(got, "page (integer), q (number)") {
		t.Errorf("after the schema changed = %q, want %q", got, want)
	}
	copy(a.Parameters, fmt.Sprintf("%-*s", len(a.Parameters), `{"type":"object","properties":{"x":{"type":"string"}}}`))
	if got, want := c.Methods([]workflow.ActionSpec{a}), Methods([]workflow.ActionSpec{a}); got != want || !strings.Contains(got, "x (string)") {
		t.Errorf("after the caller rewrote the schema in place = %q, want %q", got, want)
	}
	if n := c.methods.Len(); n != 1 {
		t.Errorf("cache holds %d entries for one action name, want 1", n)
	}
}

// Concurrent renders of changing registries agree with Methods (run with
// -race).
func TestMethodCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := NewCache()
	regs := [][]workflow.ActionSpec{registry(8), registry(3)}
	regs[1][0].Parameters = json.RawMessage(`{"type":"object","properties":{"only":{"type":"string"}}}`)
	want := []string{Methods(regs[0]), Methods(regs[1])}
	var wg sync.WaitGroup
	errs := make([]string, 8)
	for g := range errs {
		wg.Go(func() {
			for i := range 50 {
				r := (g + i) % 2
				if got := c.Methods(regs[r]); got != want[r] {
					errs[g] = fmt.Sprintf("goroutine %d, render %d: got\n%s\nwant\n%s", g, i, got, want[r])
					return
				}
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// BenchmarkMethods renders AVAILABLE_METHODS for a 40-action registry,
// parsing every schema each time (uncached) and from a warm Cache.
func BenchmarkMethods(b *testing.B) {
	actions := registry(40)
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		start := processCPU()
		for b.Loop() {
			_ = Methods(actions)
		}
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	})
	b.Run("cached", func(b *testing.B) {
		c := NewCache()
		c.Methods(actions)
		b.ReportAllocs()
		start := processCPU()
		for b.Loop() {
			_ = c.Methods(actions)
		}
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	})
}
