package workflow

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestReadActionSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		raw      string
		wantErr  bool
		names    []string
		required []string
		closed   bool
		params   []string // "name type required"
	}{
		{name: "empty", raw: ""},
		{name: "not an object", raw: `[1]`, wantErr: true},
		{name: "malformed required", raw: `{"required":"q"}`, wantErr: true},
		{name: "closed", raw: `{"type":"object","required":["q"],"additionalProperties":false,"properties":{
			"q":{"type":"string"},"n":{"type":["number","null"]},"e":{"enum":["a","b"]},"x":true}}`,
			names: []string{"e", "n", "q", "x"}, required: []string{"q"}, closed: true,
			params: []string{"q string true", "e enum false", "n number|null false", "x any false"}},
		{name: "open with a schema for the others", raw: `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`,
			names: []string{"a"}, params: []string{"a any false"}},
		{name: "explicitly open", raw: `{"properties":{},"additionalProperties":true}`, names: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadActionSchema(json.RawMessage(tc.raw))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := s.Names(); len(got)+len(tc.names) > 0 && !slices.Equal(got, tc.names) {
				t.Errorf("Names = %v, want %v", got, tc.names)
			}
			if !slices.Equal(s.Required, tc.required) || s.Closed != tc.closed {
				t.Errorf("Required, Closed = %v, %v; want %v, %v", s.Required, s.Closed, tc.required, tc.closed)
			}
			var params []string
			for _, p := range s.Params() {
				params = append(params, p.Name+" "+p.Type+" "+map[bool]string{true: "true", false: "false"}[p.Required])
				if string(p.Schema) != string(s.Properties[p.Name]) {
					t.Errorf("param %s: schema %s, want the property's own", p.Name, p.Schema)
				}
			}
			if !slices.Equal(params, tc.params) {
				t.Errorf("Params = %q, want %q", params, tc.params)
			}
		})
	}
}
