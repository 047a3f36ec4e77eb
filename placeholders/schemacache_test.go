package placeholders

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// The Stage 2 cut is cached by action name and asked fields, but a hit
// needs the same registered schema: an action re-registered under the
// same name with another schema, or other field descriptions, gives its
// own cut, and a caller changing the names it got changes no later result.
func TestStageTwoCacheChecksSchemaAndFields(t *testing.T) {
	t.Parallel()
	schema := func(desc string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"` + desc + `"},"n":{"type":"number"}},"required":["q"]}`)
	}
	fields := []workflow.FieldSpec{{Name: "n", Type: "number", Description: "how many"}}
	c := NewCache()
	first := workflow.ActionSpec{Name: "cache.search", Parameters: schema("first")}
	text1, names1, err := c.StageTwoSchemaFields(first, fields)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text1, `"first"`) || !slices.Equal(names1, []string{"q", "n"}) {
		t.Fatalf("cut = %s %v", text1, names1)
	}
	names1[0] = "changed by the caller"
	if _, again, _ := c.StageTwoSchemaFields(first, fields); !slices.Equal(again, []string{"q", "n"}) {
		t.Errorf("names after a caller changed its copy = %v", again)
	}
	if got, _ := c.StageTwoFields(first, fields); !slices.Equal(got, []string{"q", "n"}) {
		t.Errorf("StageTwoFields = %v", got)
	}

	second := workflow.ActionSpec{Name: "cache.search", Parameters: schema("second")}
	text2, _, err := c.StageTwoSchemaFields(second, fields)
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := stageTwoSchemaFields(second, fields); text2 != want || !strings.Contains(text2, `"second"`) {
		t.Errorf("same action name, other schema: cut =\n%s\nwant\n%s", text2, want)
	}

	other := []workflow.FieldSpec{{Name: "n", Type: "number", Description: "how many at most"}}
	text3, _, _ := c.StageTwoSchemaFields(second, other)
	if want, _, _ := stageTwoSchemaFields(second, other); text3 != want || !strings.Contains(text3, "how many at most") {
		t.Errorf("other field description: cut =\n%s\nwant\n%s", text3, want)
	}
	if again, _, _ := c.StageTwoSchemaFields(second, fields); again != text2 {
		t.Errorf("cut changed after another cut of the same action:\n%s\nwant\n%s", again, text2)
	}
}

// A property schema that is not an object (JSON Schema's true) cannot be
// shown, but the names Stage 2 may fill are still known, as before the cache.
func TestStageTwoFieldsWithBooleanProperty(t *testing.T) {
	t.Parallel()
	action := workflow.ActionSpec{Name: "cache.any", Parameters: json.RawMessage(`{"type":"object","properties":{"x":true},"required":["x"]}`)}
	if _, err := StageTwoSchema(action, nil); err == nil {
		t.Fatal("StageTwoSchema of a boolean property schema did not fail")
	}
	for name, fields := range map[string]func(workflow.ActionSpec, []workflow.FieldSpec) ([]string, error){
		"uncached": StageTwoFields, "cached": NewCache().StageTwoFields,
	} {
		got, err := fields(action, nil)
		if err != nil || !slices.Equal(got, []string{"x"}) {
			t.Errorf("%s StageTwoFields = %v, %v; want [x]", name, got, err)
		}
	}
}
