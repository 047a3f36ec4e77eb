package actions

import (
	"strings"
	"testing"
)

// TestSchemaRefusesLookalikeReservedNames: an action schema (HTTP, MCP or
// OpenAPI actions all come through compileSchema) may not declare a
// reserved name spelled with look-alike letters, full width, a zero-width
// space or a trailing space, and parameters spelled so are refused too.
func TestSchemaRefusesLookalikeReservedNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"documеntList", "ｄｏｃｕｍｅｎｔｓ", "connec\u200btions", "history "} {
		_, err := compileSchema("t.x", map[string]any{"type": "object", "properties": map[string]any{name: map[string]any{"type": "string"}}})
		if err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("schema declaring %q: %v, want it refused as reserved", name, err)
		}
	}
	open, err := compileSchema("t.open", map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	lines := open.validateNormal(map[string]any{"ｈｉｓｔｏｒｙ": "x", "query": "y"})
	if len(lines) != 1 || !strings.Contains(lines[0], "reserved name") {
		t.Errorf("open schema, look-alike key: %q, want one reserved-name line", lines)
	}
}
