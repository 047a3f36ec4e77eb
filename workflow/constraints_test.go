package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// TestNarrowSpec: each constrained property gets the fragment's keywords
// merged into its schema, the fragment's winning; other properties, the
// rest of the schema and the spec's other fields are unchanged; no
// constraint, or a schema that does not decode, leaves the spec as it is.
func TestNarrowSpec(t *testing.T) {
	t.Parallel()
	spec := workflow.ActionSpec{Name: "tickets.create", Effect: workflow.EffectWrite, Parameters: json.RawMessage(
		`{"type":"object","required":["priority"],"properties":{"priority":{"type":"integer","minimum":1,"maximum":5},"title":{"type":"string"}}}`)}
	tests := []struct {
		name        string
		spec        workflow.ActionSpec
		constraints map[string]any
		want        string
	}{
		{"none", spec, nil, string(spec.Parameters)},
		{"maximum replaced, minimum kept", spec, map[string]any{"priority": map[string]any{"maximum": 2}},
			`{"properties":{"priority":{"maximum":2,"minimum":1,"type":"integer"},"title":{"type":"string"}},"required":["priority"],"type":"object"}`},
		{"enum added", spec, map[string]any{"title": map[string]any{"enum": []any{"outage"}}},
			`{"properties":{"priority":{"maximum":5,"minimum":1,"type":"integer"},"title":{"enum":["outage"],"type":"string"}},"required":["priority"],"type":"object"}`},
		{"not an object: ignored", spec, map[string]any{"title": "x"},
			`{"properties":{"priority":{"maximum":5,"minimum":1,"type":"integer"},"title":{"type":"string"}},"required":["priority"],"type":"object"}`},
		{"schema that does not decode", workflow.ActionSpec{Name: "x", Parameters: json.RawMessage(`[`)},
			map[string]any{"a": map[string]any{"maximum": 1}}, `[`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workflow.NarrowSpec(tt.spec, tt.constraints)
			if string(got.Parameters) != tt.want {
				t.Errorf("narrowed schema = %s\nwant %s", got.Parameters, tt.want)
			}
			got.Parameters, tt.spec.Parameters = nil, nil
			if diff := cmp.Diff(tt.spec, got); diff != "" {
				t.Errorf("other fields changed (-want +got):\n%s", diff)
			}
		})
	}
	if string(spec.Parameters) != `{"type":"object","required":["priority"],"properties":{"priority":{"type":"integer","minimum":1,"maximum":5},"title":{"type":"string"}}}` {
		t.Errorf("NarrowSpec changed its argument's schema: %s", spec.Parameters)
	}
}
