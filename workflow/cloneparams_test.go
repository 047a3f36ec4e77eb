package workflow_test

import (
	"reflect"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// CloneParams copies maps and []any all the way down: the copy is equal,
// and changing any container of it leaves the original as it was. nil
// stays nil, at the top and inside.
func TestCloneParams(t *testing.T) {
	t.Parallel()
	orig := map[string]any{"s": "x", "n": 1.5, "nilList": []any(nil), "nilMap": map[string]any(nil),
		"nested": map[string]any{"list": []any{"a", map[string]any{"k": "v"}, []any{2.0}}}}
	want := map[string]any{"s": "x", "n": 1.5, "nilList": []any(nil), "nilMap": map[string]any(nil),
		"nested": map[string]any{"list": []any{"a", map[string]any{"k": "v"}, []any{2.0}}}}
	c := workflow.CloneParams(orig)
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("CloneParams = %#v, want %#v", c, orig)
	}
	c["s"] = "changed"
	list := c["nested"].(map[string]any)["list"].([]any)
	list[0] = "changed"
	list[1].(map[string]any)["k"] = "changed"
	list[2].([]any)[0] = "changed"
	c["nested"].(map[string]any)["added"] = true
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("changing the copy changed the original: %#v", orig)
	}
	if workflow.CloneParams(nil) != nil {
		t.Fatal("CloneParams(nil) is not nil")
	}
}
