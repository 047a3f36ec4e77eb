package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheClient: the command-line client and package client
// build on the client and the wire types alone, so a user's binary pulls
// in no server code (no engine, store, gin, huma, go-redis or
// langchaingo).
func TestImportsOnlyTheClient(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/twostep/twostep/cmd/twostep").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "github.com/twostep/twostep/cmd/twostep", "github.com/twostep/twostep/client",
			"github.com/twostep/twostep/apiv1", "github.com/twostep/twostep/adminv1":
		default:
			t.Errorf("cmd/twostep depends on %s", pkg)
		}
	}
}
