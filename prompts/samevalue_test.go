package prompts

import (
	"encoding/json"
	"testing"
)

// TestSameValue: values equal as grounding normalises them, and values
// that differ in what they say do not.
func TestSameValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string // JSON
		same      bool
	}{
		{`"ACME  Corp"`, `"acme corp"`, true},
		{`"ACME Corp"`, `"ACME Corporation"`, false},
		{`1250.5`, `1250.50`, true},
		{`"1,250.50"`, `1250.5`, true},
		{`"$1,250.50"`, `"1250.5"`, true},
		{`1250`, `1250.5`, false},
		{`"5 March 2024"`, `"2024-03-05"`, true},
		{`"2024-03-06"`, `"2024-03-05"`, false},
		{`"2024-03-05T14:00:00Z"`, `"2024-03-05T14:00"`, true},
		{`"2024-03-05T15:00:00Z"`, `"2024-03-05T14:00"`, false},
		{`true`, `true`, true},
		{`"true"`, `true`, false},
		{`null`, `null`, true},
		{`["a","B"]`, `["A","b"]`, true},
		{`["b","a"]`, `["a","b"]`, false},
		{`{"sku":"X-1","qty":"2"}`, `{"qty":2,"sku":"x-1"}`, true},
		{`{"sku":"X-1"}`, `{"qty":2,"sku":"x-1"}`, false},
		{`"INV-2024-0042"`, `"inv-2024-0042"`, true},
		{`"INV-2024-0043"`, `"INV-2024-0042"`, false},
	} {
		var got, want any
		if err := json.Unmarshal([]byte(tc.got), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if SameValue(got, want) != tc.same {
			t.Errorf("SameValue(%s, %s) = %v, want %v", tc.got, tc.want, !tc.same, tc.same)
		}
	}
}
