package workflow

import "testing"

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n                int
		singular, plural string
		want             string
	}{
		{0, "document", "", "0 documents"},
		{1, "document", "", "1 document"},
		{2, "document", "", "2 documents"},
		{1, "entry", "entries", "1 entry"},
		{3, "entry", "entries", "3 entries"},
	} {
		if got := Count(tt.n, tt.singular, tt.plural); got != tt.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tt.n, tt.singular, tt.plural, got, tt.want)
		}
	}
}
