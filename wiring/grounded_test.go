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
