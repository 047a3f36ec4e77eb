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
