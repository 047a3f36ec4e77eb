package wiring

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twostep/twostep/redact"
)

// TestLogLinesScrubMixedForms: a log field holding the secret upper-cased,
// partly \u-escaped, in hex or as HTML references (JSON-encoded again by
// the logger) leaves no trace of it in the line, in either format.
func TestLogLinesScrubMixedForms(t *testing.T) {
	t.Parallel()
	const secret = "conn-MARKER-9d41e7b2"
	var scrub atomic.Pointer[redact.Redactor]
	scrub.Store(redact.New(secret))
	for _, format := range []string{"json", "console"} {
		for _, field := range []string{
			strings.ToUpper(secret),
			`{"k":"co\u006En-MAR\u004BER-9d41e7b2"}`,
			"636f6e6e2d4d41524b45522d3964343165376232",
			"&#x63;onn-MARKER&#45;9d41e7b2",
		} {
			var out bytes.Buffer
			log, err := NewLogger(&out, format, "info", &scrub)
			if err != nil {
				t.Fatal(err)
			}
			log.Info().Str("upstream", field).Msg("action failed")
			if line := strings.ToLower(out.String()); strings.Contains(line, "9d41e7b2") || strings.Contains(line, "3964343165376232") ||
				!strings.Contains(line, "redacted") {
				t.Errorf("%s, field %q: %s", format, field, out.String())
			}
		}
	}
}
