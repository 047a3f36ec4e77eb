package httpapi

import (
	"encoding/json"
	"testing"
)

// TestWithoutSecrets: a kept answer loses its top-level webhookSecret
// wherever it stands, and keeps everything else byte for byte.
func TestWithoutSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"id":"wf_1","webhookSecret":"whsec_x","status":"running"}`, `{"id":"wf_1","status":"running"}`},
		{`{"webhookSecret":"whsec_x","id":"wf_1"}`, `{"id":"wf_1"}`},
		{`{"id":"wf_1","webhookSecret":"whsec_x"}`, `{"id":"wf_1"}`},
		{`{"webhookSecret":"whsec_x"}`, `{}`},
		{"{\n  \"webhookSecret\": \"whsec_x\",\n  \"id\": \"wf_1\"\n}", "{\n  \n  \"id\": \"wf_1\"\n}"},
		{`{"id":"wf_1","nested":{"webhookSecret":"kept: not top level"}}`, `{"id":"wf_1","nested":{"webhookSecret":"kept: not top level"}}`},
		{`{"id":"wf_1"}`, `{"id":"wf_1"}`},
		{`not json webhookSecret`, `not json webhookSecret`},
	}
	for _, tc := range tests {
		got := string(withoutSecrets([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("withoutSecrets(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
			t.Errorf("withoutSecrets(%s) = %s: not JSON", tc.in, got)
		}
	}
}
