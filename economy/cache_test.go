package economy_test

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/economy"
)

func TestCachedPrefix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ prompt, shared, want int }{
		{1023, 1023, 0},    // under the minimum prompt
		{1024, 127, 0},     // less than a block
		{1024, 128, 0},     // a block, but less than the minimum shared
		{2000, 1023, 0},    // one token short of the minimum shared
		{2000, 1024, 1024}, // the minimum
		{2000, 1151, 1024}, // then whole blocks only
		{2000, 1999, 1920}, // whole blocks only
		{1100, 5000, 1024}, // never more than the prompt
	} {
		if got := economy.CachedPrefix(c.prompt, c.shared); got != c.want {
			t.Errorf("CachedPrefix(%d, %d) = %d, want %d", c.prompt, c.shared, got, c.want)
		}
	}
}

// The cache serves the longest prefix shared with any earlier request, and
// never cuts a UTF-8 sequence.
func TestPrefixCacheServesTheLongestSharedPrefix(t *testing.T) {
	t.Parallel()
	c := economy.NewPrefixCache(byteCount)
	a := strings.Repeat("a", 1500)
	if got := c.Serve(a+"x", 2000); got != 0 {
		t.Errorf("first request: %d cached, want 0", got)
	}
	if got := c.Serve(strings.Repeat("a", 1300)+"é", 2000); got != 1280 {
		t.Errorf("second: %d cached, want 1280 (1,300 shared)", got)
	}
	if got := c.Serve(strings.Repeat("a", 1000)+"é", 2000); got != 0 {
		t.Errorf("1,000 shared: %d cached, want 0 (under the 1,024 a provider caches at least)", got)
	}
	// Shares 1,500 with the first (not 1,300 with the second): 11 blocks.
	if got := c.Serve(a+"y", 1600); got != 1408 {
		t.Errorf("third: %d cached, want 1408", got)
	}
	// "é" and "è" share their first byte: the shared prefix stops before it.
	c = economy.NewPrefixCache(func(s string) int {
		if !strings.HasSuffix(s, "a") {
			t.Errorf("counted a prefix that cuts a UTF-8 sequence: %q", s[len(s)-4:])
		}
		return len(s)
	})
	c.Serve(a+"é", 2000)
	if got := c.Serve(a+"è", 2000); got != 1408 {
		t.Errorf("é/è: %d cached, want 1408", got)
	}
}

// A model that reported cache use has its reported figures taken as they
// are; the other models' are modelled.
func TestComputeTakesReportedCache(t *testing.T) {
	t.Parallel()
	in := smallWorkflow()
	in.Traces[0].CachedTokens = 0 // a miss, reported
	in.Traces[4].CachedTokens = 1280
	in.Traces[1].Model = "small/m" // Stage 2 elsewhere: modelled (under 1,024 anyway)
	got := economy.Compute(in)
	if s := got.Steps[1].Stage1; s.Cached != 1280 {
		t.Errorf("step 2's Stage 1 cached %d, want the reported 1280", s.Cached)
	}
	if s := got.Steps[0].Stage1; s.Cached != 0 {
		t.Errorf("step 1's Stage 1 cached %d, want the reported 0", s.Cached)
	}
	if got.Totals.Cached != 1280 {
		t.Errorf("totals cached %d, want 1280", got.Totals.Cached)
	}
	if len(economy.Compute(economy.Input{Count: byteCount}).Steps) != 0 || economy.Compute(economy.Input{Count: byteCount}).Steps == nil {
		t.Error("the report of nothing has steps or null steps")
	}
}
