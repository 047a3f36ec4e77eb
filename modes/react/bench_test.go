package react_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// tenSteps is a scripted 10-step round: nine echoes, then complete.
func tenSteps() []string {
	var r [][]string
	for i := range 9 {
		r = append(r, enginetest.Echoes(fmt.Sprintf("result of step %d with some text to summarise", i+1)))
	}
	return replies(append(r, enginetest.Completes("all ten steps done"))...)
}

// BenchmarkEngineStep measures the engine's own cost per React step — two
// prompt renders and parses, three commits, two traces, the action — with
// an instant scripted model on memstore. Reported as ns/step and
// allocs/step besides the per-workflow figures.
//
// The memstore-40-actions case offers 36 more actions with realistic
// parameter schemas, as a deployed registry does: there AVAILABLE_METHODS
// dominates the Stage 1 render.
func BenchmarkEngineStep(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchSteps(b, newStore(), enginetest.NewRegistry()) })
	b.Run("memstore-40-actions", func(b *testing.B) { benchSteps(b, newStore(), largeRegistry(36)) })
	b.Run("redis", func(b *testing.B) { benchSteps(b, redisStores(b)(b), enginetest.NewRegistry()) })
}

// largeRegistry is the test registry plus n read actions whose schemas have
// a handful of described, typed, nested properties.
func largeRegistry(n int) *enginetest.Registry {
	reg := enginetest.NewRegistry()
	schema, _ := json.Marshal(map[string]any{
		"type": "object", "required": []string{"query", "language"},
		"properties": map[string]any{
			"query":    map[string]any{"type": "string", "description": "what to look for, in plain words"},
			"language": map[string]any{"type": "string", "enum": []string{"en", "de", "fr"}, "description": "output language"},
			"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "how many results"},
			"options": map[string]any{"type": "object", "properties": map[string]any{
				"strict": map[string]any{"type": "boolean"}, "fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}},
		},
	})
	for i := range n {
		reg.Specs = append(reg.Specs, workflow.ActionSpec{
			Name: fmt.Sprintf("extra%d.search%d", i/4, i), Description: "Searches source " + fmt.Sprint(i) + ".",
			Parameters: schema, Effect: workflow.EffectRead, Documents: workflow.DocumentsOptional,
		})
	}
	return reg
}

func benchSteps(b *testing.B, store workflow.Store, reg workflow.Registry) {
	script := tenSteps()
	model := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		return script[n%len(script)], nil
	}}
	cfg := testConfig("bench")
	cfg.PollInterval = time.Second
	steps := &enginetest.Steps{}
	cfg.Observer = steps
	e := startEngine(b, cfg, store, model, reg)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := enginetest.CPUTime()
	for b.Loop() {
		wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "run ten steps", MaxSteps: 10})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
			b.Fatalf("round ended %+v, %v", got, err)
		}
	}
	b.StopTimer()
	n := float64(b.N * 10)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "wall-ns/step")
	b.ReportMetric(float64((enginetest.CPUTime()-cpu).Nanoseconds())/n, "cpu-ns/step")
	b.ReportMetric(float64(steps.Median().Nanoseconds()), "median-ns/step")
}

// TestStage2PromptIsSmall logs the median Stage 2 prompt size as a
// fraction of the Stage 1 prompt size over a scripted 10-step round with an
// uploaded document, and checks Stage 2 stays smaller than Stage 1 at every
// step (it never carries history, documents or the user prompt).
func TestStage2PromptIsSmall(t *testing.T) {
	t.Parallel()
	model := scripted.New(tenSteps()...)
	e := startEngine(t, testConfig("a"), newStore(), model, enginetest.NewRegistry())
	wf, err := e.Create(context.Background(), engine.NewWorkflow{
		UserID: "alice", Prompt: "Summarise the attached quarterly report and echo the key figures, step by step.", MaxSteps: 10,
		Documents: []workflow.DocumentContent{{Document: workflow.Document{Name: "report.txt", MimeType: "text/plain"}, Content: []byte("revenue 10, costs 7")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, e, wf.ID); got.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", got.Status, got.Error)
	}
	var one, two []int
	for _, c := range model.Calls() {
		size := len(c.Text())
		if c.Stage == s1 {
			one = append(one, size)
		} else {
			two = append(two, size)
		}
	}
	if len(one) != 10 || len(two) != 10 {
		t.Fatalf("%d Stage 1 and %d Stage 2 calls, want 10 each", len(one), len(two))
	}
	ratios := make([]float64, 10)
	for i := range ratios {
		ratios[i] = float64(two[i]) / float64(one[i])
		if two[i] >= one[i] {
			t.Errorf("step %d: Stage 2 prompt %d bytes, Stage 1 %d bytes", i+1, two[i], one[i])
		}
	}
	slices.Sort(ratios)
	t.Logf("Stage 1 prompt bytes %v; Stage 2 prompt bytes %v", one, two)
	t.Logf("median Stage 2 / Stage 1 prompt size: %.3f (min %.3f, max %.3f)", (ratios[4]+ratios[5])/2, ratios[0], ratios[9])
}
