package engine

import (
	"testing"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow/storetest"
)

// TestTracedStoreKeepsEveryCapability: the span-opening wrapper a traced
// engine puts over the gateway's store (itself the trace redactor over
// the opened store) hides none of the store's capabilities — a round is
// still claimed and read in one step (RoundLoader), and so on.
func TestTracedStoreKeepsEveryCapability(t *testing.T) {
	t.Parallel()
	raw := memstore.New()
	storetest.Capabilities(t, tracedStore{Store: redact.Traces(raw, redact.New())}, raw)
}
