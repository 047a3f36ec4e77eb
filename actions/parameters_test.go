package actions

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestCompileParameters: a schema compiled apart from the registry gives
// the registry's problem lines, and a schema the registry would refuse is
// refused.
func TestCompileParameters(t *testing.T) {
	t.Parallel()
	p, err := CompileParameters("t.create", json.RawMessage(`{"type":"object","additionalProperties":false,"required":["title"],"properties":{"title":{"type":"string"},"n":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Problems(map[string]any{"title": "x", "n": 2.0}); got != nil {
		t.Errorf("valid parameters: %v", got)
	}
	got := p.Problems(map[string]any{"n": "two", "documents": []any{}})
	want := []string{"/title: required parameter is missing", "/n: got string, want integer", "/documents: reserved name: documents and connections are chosen with the action, never passed as parameters"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return len(g) >= len(w) && g[:len(w)] == w }) {
			t.Errorf("problems %q lack %q", got, w)
		}
	}
	for _, bad := range []string{`{"type":"array"}`, `{"type":"object","properties":{"history":{"type":"string"}}}`, `{"$ref":"https://example.com/s.json","type":"object"}`, `[1]`} {
		if _, err := CompileParameters("t.bad", json.RawMessage(bad)); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}
