package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// A rejected value echoed in a 422 is cut on a character boundary: a
// multi-byte character across maxEchoedValue is dropped whole, so the
// echo is a prefix of what the client sent, never a replacement character.
func TestEchoedValueIsCutOnACharacterBoundary(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for _, char := range []string{"é", "计", "🙂"} {
		head := strings.Repeat("a", maxEchoedValue-1)
		rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, map[string]any{"prompt": "x", "mode": head + strings.Repeat(char, 3)})
		if rec.Code != 422 {
			t.Fatalf("status = %d, want 422: %s", rec.Code, rec.Body)
		}
		var p struct {
			Errors []struct {
				Location string `json:"location"`
				Value    any    `json:"value"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) != 1 || p.Errors[0].Value != head+"…(truncated)" {
			t.Errorf("%q: errors = %+v, want the mode echoed as the %d bytes before the character", char, p.Errors, len(head))
		}
	}
}
