package workflow_test

import (
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/twostep/twostep/workflow"
)

func TestNewID(t *testing.T) {
	for _, prefix := range []string{workflow.PrefixWorkflow, workflow.PrefixMessage, "", "a_prefix_longer_than_the_buffer_"} {
		prev := ""
		for range 100 {
			id := workflow.NewID(prefix)
			rest, ok := strings.CutPrefix(id, prefix)
			if !ok || len(rest) != ulid.EncodedSize || strings.ToLower(rest) != rest || !workflow.ValidID(prefix, id) {
				t.Fatalf("NewID(%q) = %q: want the prefix and a lower-case ULID", prefix, id)
			}
			if id <= prev {
				t.Fatalf("NewID(%q) = %q after %q: ids of one process must increase", prefix, id, prev)
			}
			prev = id
		}
	}
}
