package wiring

import (
	"strings"
	"testing"
)

func TestStage2RequireGroundedIsChecked(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithFile(t, "stage2: {requireGrounded: write}\n")
	if err != nil || cfg.File.Stage2.RequireGrounded != "write" {
		t.Fatalf("requireGrounded: write = %q, %v; want it read", cfg.File.Stage2.RequireGrounded, err)
	}
	_, err = loadWithFile(t, "stage2: {requireGrounded: writes}\n")
	if err == nil || !strings.Contains(err.Error(), `stage2.requireGrounded: "writes" is not one of never, write, all`) {
		t.Errorf("requireGrounded: writes gave %v, want it refused with the settings", err)
	}
}

func TestEarlyStartIsReadAndOnByDefault(t *testing.T) {
	cfg, err := loadWithFile(t, "stage2: {earlyStart: false}\n")
	if err != nil || cfg.File.Stage2.earlyStart() {
		t.Fatalf("earlyStart: false = %v, %v; want it read", cfg.File.Stage2.EarlyStart, err)
	}
	cfg, err = loadWithFile(t, "stage2: {requireGrounded: never}\n")
	if err != nil || !cfg.File.Stage2.earlyStart() {
		t.Fatalf("no earlyStart = %v, %v; want on", cfg.File.Stage2.EarlyStart, err)
	}
}
