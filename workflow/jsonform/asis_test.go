package jsonform_test

import (
	"bytes"
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

// FuzzAppendCompact holds AppendCompact to json.Compact: the same bytes
// whenever it answers, and an answer for every valid value within its
// depth bound.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : [ 1 , 2.5e-3 , "x y" ] ,"b":{ }} `, "\t[\n]\r\n", `"<&>"`, "\"\u2028\"",
		`{"a":1,}`, `{"a" 1}`, `[1 2]`, `{} {}`, "\"a\x01\"", `"\q"`, " ", ``, "\"\xff\"", `-0.0E+1`, `nul`,
		strings.Repeat("[ ", 70) + strings.Repeat("] ", 70), "```json\n{}\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		err := json.Compact(&want, []byte(s))
		got, ok := jsonform.AppendCompact([]byte("prefix"), s)
		switch {
		case ok && err != nil:
			t.Fatalf("AppendCompact(%q) = %q; json.Compact fails: %v", s, got, err)
		case ok && string(got) != "prefix"+want.String():
			t.Fatalf("AppendCompact(%q)\n got %q\nwant %q", s, got, "prefix"+want.String())
		case !ok && string(got) != "prefix":
			t.Fatalf("AppendCompact(%q) declined but wrote %q", s, got)
		case !ok && err == nil && depthOf(s) <= 64:
			t.Fatalf("AppendCompact declined %q, which json.Compact takes", s)
		}
		if b, ok2 := jsonform.AppendCompact(nil, []byte(s)); ok2 != ok || ok && string(b) != want.String() {
			t.Fatalf("AppendCompact of []byte(%q) = %q, %v; of the string %v", s, b, ok2, ok)
		}
	})
}

// depthOf is the deepest nesting of brackets in s, strings ignored.
func depthOf(s string) int {
	d, most, in, esc := 0, 0, false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// TestCompactAllocatesNothing: the checks run on every stored trace and
// every reply, so the parser must stay off the heap.
func TestCompactAllocatesNothing(t *testing.T) {
	raw := []byte(`{"action":"text.echo","learnings":["a","b"],"n":[1,2.5,{"x":null}]}`)
	buf := make([]byte, 0, 2*len(raw))
	loose := " { \"a\" : [ 1 , true ] } "
	if n := testing.AllocsPerRun(100, func() {
		if !jsonform.CompactAsIs(raw) {
			t.Fatal("CompactAsIs declined")
		}
		if _, ok := jsonform.AppendCompact(buf[:0], loose); !ok {
			t.Fatal("AppendCompact declined")
		}
		if _, ok := jsonform.AppendCompact(buf[:0], raw); !ok {
			t.Fatal("AppendCompact declined")
		}
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}
