package wiring

import (
	"strings"
	"testing"
)

// limits.latestBudget, documentsIndexBudget and historyLayout are read
// from the file (DESIGN §11.1); a negative budget or an unknown layout is
// refused.
func TestHistoryLimits(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithFile(t, "limits: {latestBudget: 1500, documentsIndexBudget: 9000, historyLayout: single}\n")
	if l := cfg.File.Limits; err != nil || l.LatestBudget != 1500 || l.DocumentsIndexBudget != 9000 || l.HistoryLayout != "single" {
		t.Fatalf("limits = %+v, %v; want 1500, 9000, single", cfg.File.Limits, err)
	}
	for yaml, want := range map[string]string{
		"limits: {latestBudget: -1}\n":         "limits: values must not be negative",
		"limits: {documentsIndexBudget: -1}\n": "limits: values must not be negative",
		"limits: {historyLayout: stacked}\n":   `limits: historyLayout must be sections or single, not "stacked"`,
	} {
		if _, err := loadWithFile(t, yaml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(yaml), err, want)
		}
	}
}
