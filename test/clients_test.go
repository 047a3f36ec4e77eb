package test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedClients generates a TypeScript client (openapi-typescript +
// openapi-fetch) and a Go client (oapi-codegen) from the OpenAPI document
// the built gateway serves, compiles both (tsc strict; go build) and runs
// each against the gateway with the offline model: create a workflow with
// a document → wait for its round → messages → download the document → a
// decoded 404 problem. The programs (test/clients/ts, test/clients/go) only
// compile when always-sent arrays and fields are neither nullable nor
// pointers and a workflow's status is one type.
//
// The npm packages come from TWOSTEP_CLIENT_TOOLS (a node_modules folder
// with the versions of test/clients/ts/package.json; .ci/run installs
// them); oapi-codegen is the tool of test/clients/go/go.mod, whose
// modules must be in the module cache (.ci/run downloads them; the test
// itself never reaches the network). Without them the test skips, unless
// CI is set.
func TestGeneratedClients(t *testing.T) {
	t.Parallel()
	tools := os.Getenv("TWOSTEP_CLIENT_TOOLS")
	_, nodeErr := exec.LookPath("node")
	if tools == "" || nodeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs node and TWOSTEP_CLIENT_TOOLS (a node_modules folder with openapi-typescript, openapi-fetch and typescript; .ci/run installs it)")
		}
		t.Skip("set TWOSTEP_CLIENT_TOOLS to a node_modules folder with test/clients/ts/package.json's packages (and have node) to run")
	}
	goDir := copyClientDir(t, filepath.Join("clients", "go"))
	if out, err := clientGoCmd(goDir, "mod", "download").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go mod download (oapi-codegen): %v\n%s", err, out)
		}
		t.Skipf("oapi-codegen's module is not available: %v\n%s", err, out)
	}

	g := startGateway(t, nil, "LLM_PROVIDER=scripted")
	resp, err := http.Get(g.url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(specFile, spec, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GATEWAY_URL=" + g.url, "GATEWAY_TOKEN=" + gwAlice}

	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		dir := copyClientDir(t, filepath.Join("clients", "ts"))
		if err := os.Symlink(tools, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(tools, ".bin")
		runTool(t, dir, nil, filepath.Join(bin, "openapi-typescript"), specFile, "-o", "schema.d.ts")
		runTool(t, dir, nil, filepath.Join(bin, "tsc"), "-p", ".")
		if out := runTool(t, dir, env, "node", "client.js"); strings.TrimSpace(out) != "ok" {
			t.Errorf("TypeScript client printed %q, want ok", out)
		}
	})
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		runTool(t, goDir, nil, "go", "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", specFile)
		runTool(t, goDir, nil, "go", "build", "-o", "client", ".")
		if out := runTool(t, goDir, env, filepath.Join(goDir, "client")); strings.TrimSpace(out) != "ok" {
			t.Errorf("Go client printed %q, want ok", out)
		}
	})
}

// clientGoCmd is a go command in dir with the local toolchain and module mode
// (the client module is not the repository's).
func clientGoCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// GOPROXY=off: the test uses no network; .ci/run downloads the
	// module's requirements beforehand.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	return cmd
}

// runTool runs name in dir (go commands as clientGoCmd does) with env added and
// returns its stdout; a failure fails the test with both outputs.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	var cmd *exec.Cmd
	if name == "go" {
		cmd = clientGoCmd(dir, args...)
	} else {
		cmd = exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// copyClientDir copies the files of src (one level) into a new temporary folder.
func copyClientDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
