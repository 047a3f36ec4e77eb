package prompts

import (
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply, want, wantErr string
	}{
		{name: "array in fence", reply: "Plan:\n```json\n[{\"action\": \"ai.process\"}]\n```", want: `[{"action":"ai.process"}]`},
		{name: "object in prose", reply: `I'd say {"actions": [{"a": 1}]} is right`, want: `{"actions":[{"a":1}]}`},
		{name: "first valid value wins", reply: `Step [1]x: {"a": "b"}`, want: `[1]`},
		{name: "braces inside strings", reply: `{"a": "}{]["} trailing }`, want: `{"a":"}{]["}`},
		{name: "nested value never taken alone", reply: `{"a": {"b": 1}, }`, want: `{"a":{"b":1}}`},
		{name: "truncated closed by repair", reply: `[{"action": "ai.process", "parameters": {"x": 1`, want: `[{"action":"ai.process","parameters":{"x":1}}]`},
		{name: "single quotes repaired", reply: `{'a': 'b'}`, want: `{"a":"b"}`},
		{name: "nothing", reply: "no json here", wantErr: "contains no JSON value"},
		{name: "too deep to repair", reply: strings.Repeat("[", MaxDepth+1) + "x", wantErr: "nests deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ExtractJSON(tt.reply)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ExtractJSON() = %s, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("ExtractJSON() = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestExtractObjectRejectsBareArray(t *testing.T) {
	t.Parallel()
	if _, err := ExtractObject("```json\n[{\"action\": \"ai.process\"}]\n```"); err == nil || !strings.Contains(err.Error(), "got an array") {
		t.Errorf("ExtractObject(array) error = %v", err)
	}
}

// TestStructuralScanners pins the string rules the three scanners share:
// commas, brackets and quotes inside strings (escaped quotes too) are data.
func TestStructuralScanners(t *testing.T) {
	t.Parallel()
	commas := []struct{ in, want string }{
		{`{"a": 1,}`, `{"a": 1}`},
		{`[1, 2 ,\n ]`, "[1, 2 \n ]"},
		{`{"a": ",}", "b": [1,],}`, `{"a": ",}", "b": [1]}`},
		{`{"a": "x\",}",}`, `{"a": "x\",}"}`},
		{`{"a": "\\",}`, `{"a": "\\"}`},
		{`,`, `,`},
	}
	for _, c := range commas {
		in := strings.ReplaceAll(c.in, `\n`, "\n")
		if got := stripTrailingCommas(in); got != c.want {
			t.Errorf("stripTrailingCommas(%q) = %q, want %q", in, got, c.want)
		}
	}
	balance := []struct{ in, want string }{
		{`{"a": "}"} tail`, `{"a": "}"}`},
		{`[{"a": "\"]"}, 2] x`, `[{"a": "\"]"}, 2]`},
		{`{"open": [`, `{"open": [`},
	}
	for _, c := range balance {
		if got := balanced(c.in); got != c.want {
			t.Errorf("balanced(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := depth(`{"a": "[[[[", "b": [[1]]}`); got != 3 {
		t.Errorf("depth = %d, want 3 (brackets in strings do not count)", got)
	}
}
