package jsonform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow/jsonform"
)

// marshalOf is json.Marshal's encoding of v.
func marshalOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzCompactAsIs holds CompactAsIs to its promise: whatever it accepts
// is valid JSON that json.Marshal writes unchanged as a RawMessage.
func FuzzCompactAsIs(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `""`, `0`, `-0.5e-3`, `1E+2`, `true`, `false`, `null`, `{"a":[1,{"b":null}],"c":"\u00e9\n"}`,
		`01`, `1.`, `.5`, `-`, `1e`, `{"a":1,}`, `[1,]`, `{"a" :1}`, `"\x"`, `"\u12"`, "\"\x01\"", `tru`, `nul`, `{"a":1}}`,
		`"<"`, `"&"`, "\"\u2028\"", "\"\xff\"", `[[[[[[]]]]]]`, strings.Repeat("[", 70) + strings.Repeat("]", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !jsonform.CompactAsIs(b) {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("CompactAsIs accepts invalid JSON %q", b)
		}
		if got := marshalOf(t, json.RawMessage(b)); got != string(b) {
			t.Fatalf("CompactAsIs accepts %q, which json.Marshal writes as %q", b, got)
		}
	})
}

// TestCompactAsIsTakesMarshalOutput holds the fast path open for what
// the modes store as Parsed: json.Marshal's own compact output.
func TestCompactAsIsTakesMarshalOutput(t *testing.T) {
	for _, v := range []any{
		map[string]any{"action": "text.echo", "learnings": []string{"l"}, "requiredConnection": nil, "n": 1.5, "ok": true, "nested": map[string]any{"x": []any{}}},
		[]any{-1, 0, 2.5e-10, "é\"\\\n", map[string]any{}},
		"plain", 12, nil,
	} {
		b := []byte(marshalOf(t, v))
		if !jsonform.CompactAsIs(b) {
			t.Errorf("CompactAsIs(%s) = false", b)
		}
	}
}
