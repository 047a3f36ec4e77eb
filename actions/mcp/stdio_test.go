package mcp

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// stdioServerEnv makes this test binary an MCP stdio server (TestMain).
const stdioServerEnv = "TWOSTEP_MCP_STDIO_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		serveStdio()
		return
	}
	os.Exit(m.Run())
}

// serveStdio is the child process: one tool answering its process id and
// whether it sees the gateway's secret variable.
func serveStdio() {
	srv := sdk.NewServer(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "pid", InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			text := strconv.Itoa(os.Getpid())
			if _, leaked := os.LookupEnv("TWOSTEP_TEST_GATEWAY_SECRET"); leaked {
				text += " leaked"
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
}

// TestStdioServerRestartedAndStopped runs this test binary as a real stdio
// server: it is started once, restarted (a new process) after it is
// killed, sees only its configured environment, and is stopped by Close.
func TestStdioServerRestartedAndStopped(t *testing.T) {
	t.Setenv("TWOSTEP_TEST_GATEWAY_SECRET", "x") // not parallel: Setenv
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Servers: []ServerConfig{{Name: "local", Command: exe, Env: map[string]string{stdioServerEnv: "1"}}}}, reg,
		Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, PingInterval: 100 * time.Millisecond})
	m.Start(context.Background())
	defer m.Close()

	pidOf := func() int {
		t.Helper()
		res, err := run(reg, "mcp.local.pid", nil)
		if err != nil {
			t.Fatalf("pid: %v", err)
		}
		if strings.Contains(res.Text, "leaked") {
			t.Error("the stdio server sees the gateway's environment")
		}
		pid, err := strconv.Atoi(res.Text)
		if err != nil {
			t.Fatalf("pid answer %q", res.Text)
		}
		return pid
	}
	first := pidOf()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		res, err := run(reg, "mcp.local.pid", nil)
		return err == nil && res.Text != strconv.Itoa(first)
	}, "a new server process")
	second := pidOf()
	if second == first {
		t.Fatalf("the server was not restarted (pid %d)", second)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return syscall.Kill(second, 0) != nil }, "Close to stop the server process")
	if _, err := run(reg, "mcp.local.pid", nil); workflow.KindOf(err) != workflow.KindUnavailable {
		t.Errorf("call after Close: %v, want unavailable", err)
	}
}
