package wiring

import (
	"strings"
	"testing"
)

// limits.experimentConcurrency is read from the file and refused when
// negative.
func TestExperimentConcurrencyLimit(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithFile(t, "limits: {experimentConcurrency: 2}\n")
	if err != nil || cfg.File.Limits.ExperimentConcurrency != 2 {
		t.Fatalf("experimentConcurrency = %d, %v; want 2", cfg.File.Limits.ExperimentConcurrency, err)
	}
	if _, err := loadWithFile(t, "limits: {experimentConcurrency: -1}\n"); err == nil || !strings.Contains(err.Error(), "limits: values must not be negative") {
		t.Errorf("a negative experimentConcurrency: %v", err)
	}
}
