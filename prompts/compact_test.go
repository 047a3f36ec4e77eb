package prompts

import (
	"strings"
	"testing"
)

func TestParseSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply, want, problem string
		limit                      int
	}{
		{"plain", "  Steps 1-3 read the contract.\n", "Steps 1-3 read the contract.", "", 100},
		{"fenced", "```text\nSteps 1-3 read the contract.\n```", "Steps 1-3 read the contract.", "", 100},
		{"cut to the limit", strings.Repeat("ä", 50), strings.Repeat("ä", 9) + "…", "", 10},
		{"empty", " \n ", "", "the summary is empty: write the summary as plain text", 100},
		{"empty fence", "```\n```", "", "the summary is empty: write the summary as plain text", 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, parsed, problem := ParseSummary(tc.reply, tc.limit)
			if got != tc.want || problem != tc.problem {
				t.Errorf("ParseSummary = %q, %q; want %q, %q", got, problem, tc.want, tc.problem)
			}
			if problem == "" && !strings.Contains(string(parsed), `"summary"`) {
				t.Errorf("parsed = %s", parsed)
			}
		})
	}
}
