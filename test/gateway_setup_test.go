package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// gatewayBin and twostepBin (the command-line client) are built once by
// TestMain; plainGatewayBin is the gateway without the race detector and
// coverage (the same binary as gatewayBin unless the tests run with
// -race), for the tests that measure the process's memory.
var gatewayBin, twostepBin, plainGatewayBin string

// coverDir, from TWOSTEP_E2E_COVERDIR, makes TestMain build the binaries
// with -cover; every process they start writes its counters there
// (GOCOVERDIR), for `go tool covdata`. Empty: plain binaries.
var coverDir = os.Getenv("TWOSTEP_E2E_COVERDIR")

// binEnv is the environment every binary the tests start gets: PATH, and
// GOCOVERDIR when coverage is collected; extra is added.
func binEnv(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	if coverDir != "" {
		env = append(env, "GOCOVERDIR="+coverDir)
	}
	return append(env, extra...)
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "twostep-gateway-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gatewayBin = filepath.Join(dir, "gateway")
	twostepBin = filepath.Join(dir, "twostep")
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceBuild {
		// Under go test -race the processes the tests start run under
		// the race detector too; a race they report fails the test that
		// started them (see raceReport).
		args = append(args, "-race")
	}
	if coverDir != "" {
		// The binaries write their coverage counters into coverDir at exit,
		// so the end-to-end tests count toward the repository's coverage.
		args = append(args, "-cover", "-coverpkg=github.com/twostep/twostep/...")
	}
	build := exec.Command("go", append(args,
		"github.com/twostep/twostep/cmd/gateway", "github.com/twostep/twostep/cmd/twostep")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the gateway:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	plainGatewayBin = gatewayBin
	if raceBuild {
		// The race detector's shadow memory would swamp what the memory
		// tests measure. Built without -cover as well: that build's
		// packages are the ones `go build` (and CI's `go run ./cmd/gateway
		// openapi`) leaves in the build cache, so only the link is left to
		// do here, where -cover would compile the whole tree a third time.
		// The memory tests' processes write no coverage counters.
		plainDir := filepath.Join(dir, "plain")
		plainGatewayBin = filepath.Join(plainDir, "gateway")
		plain := exec.Command("go", "build", "-o", plainDir+string(filepath.Separator), "github.com/twostep/twostep/cmd/gateway")
		plain.Stdout, plain.Stderr = os.Stderr, os.Stderr
		if err := plain.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the gateway without -race:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Tokens of the end-to-end users.
const (
	gwAlice = "e2e-alice-token-0123456789"
	gwBob   = "e2e-bob-token-0123456789"
	gwAdmin = "e2e-admin-token-0123456789"
	// gwMetrics is the scraper's token (GATEWAY_METRICS_TOKEN).
	gwMetrics = "e2e-metrics-token-0123456789"
	// gwAPIKey is the OpenAI key marker: it must reach the model server and
	// appear nowhere else.
	gwAPIKey = "sk-e2e-MARKER-d41d8cd9"
)

// gateway is a running gateway process.
type gateway struct {
	url    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan error
}

// startGateway runs the binary on a free loopback port with env (on top of
// the tokens and the model server) and waits until /healthz answers. The
// process is stopped with SIGTERM at cleanup, which must exit 0 within 5 s.
func startGateway(t testing.TB, model *fakeLLM, env ...string) *gateway {
	t.Helper()
	return startGatewayWith(t, model, nil, env...)
}

// startGatewayWith is startGateway with command-line args (e.g. "worker").
func startGatewayWith(t testing.TB, model *fakeLLM, args []string, env ...string) *gateway {
	t.Helper()
	return startGatewayBin(t, gatewayBin, model, args, env...)
}

// startGatewayBin is startGatewayWith running binary bin.
func startGatewayBin(t testing.TB, bin string, model *fakeLLM, args []string, env ...string) *gateway {
	t.Helper()
	g := launchBin(t, bin, model, args, env)
	waitHealthy(t, g)
	t.Cleanup(func() {
		if model != nil {
			model.releaseBlocked() // SIGTERM lets calls in flight finish
		}
		if err := g.stop(); err != nil {
			t.Errorf("gateway shutdown: %v\n%s", err, g.stderr)
		}
		if r := raceReport(g.stderr.String()); r != "" {
			t.Errorf("the gateway reported a data race:\n%s", r)
		}
		if strings.Contains(g.stderr.String(), gwAPIKey) {
			t.Errorf("the API key reached the gateway log")
		}
		for _, tok := range []string{gwAlice, gwBob, gwAdmin} {
			if strings.Contains(g.stderr.String(), tok) {
				t.Errorf("a token reached the gateway log")
			}
		}
	})
	return g
}

// raceReport returns the first data race report in a process's stderr
// (a binary built with -race prints one when it finds a race), or "".
func raceReport(stderr string) string {
	i := strings.Index(stderr, "WARNING: DATA RACE")
	if i < 0 {
		return ""
	}
	rest := stderr[i:]
	if j := strings.Index(rest, "\n==================\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// waitHealthy waits until /healthz answers 200.
func waitHealthy(t testing.TB, g *gateway) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(g.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-g.done:
			t.Fatalf("gateway exited early: %v\n%s", err, g.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not become healthy:\n%s", g.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// launch starts the process without waiting for it to be healthy.
func launch(t testing.TB, model *fakeLLM, env ...string) *gateway {
	t.Helper()
	return launchWith(t, model, nil, env)
}

// runID tells this run's Redis keys from those of earlier runs sharing the
// database (a round a killed run left running is never taken over here).
var runID = fmt.Sprintf("%x", time.Now().UnixNano())

// testPrefix is the REDIS_KEY_PREFIX of t's gateways: one per top-level
// test and run, so the gateways of one test share their workflows and
// dispatch streams while other tests' gateways — on the same Redis and
// database — never see them (nor take their rounds).
func testPrefix(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return "e2e-" + runID + "-" + name
}

// launchWith starts the binary with args and env on top of the defaults
// (among them REDIS_KEY_PREFIX, testPrefix(t)).
func launchWith(t testing.TB, model *fakeLLM, args, env []string) *gateway {
	t.Helper()
	return launchBin(t, gatewayBin, model, args, env)
}

// launchBin is launchWith running binary bin.
func launchBin(t testing.TB, bin string, model *fakeLLM, args, env []string) *gateway {
	t.Helper()
	addr := freeAddr(t)
	base := binEnv(
		"GATEWAY_ADDR="+addr, "REDIS_KEY_PREFIX="+testPrefix(t),
		"GATEWAY_TOKENS=alice:"+gwAlice+",bob:"+gwBob, "GATEWAY_ADMIN_TOKENS=root:"+gwAdmin,
		"GATEWAY_METRICS_TOKEN="+gwMetrics, "LLM_PROVIDER=openai", "OPENAI_API_KEY="+gwAPIKey, "LLM_MODEL=fake-model", "LOG_LEVEL=info",
	)
	if model != nil {
		base = append(base, "OPENAI_BASE_URL="+model.URL()+"/v1")
	} else {
		base = append(base, "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
	}
	g := &gateway{url: "http://" + addr, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	g.cmd = exec.Command(bin, args...)
	g.cmd.Env = append(base, env...)
	g.cmd.Stdout = io.Discard
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.done <- g.cmd.Wait() }()
	return g
}

// stop sends SIGTERM and requires a clean exit within 5 s.
func (g *gateway) stop() error {
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-g.done:
		return err
	case <-time.After(5 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
		return fmt.Errorf("still running 5 s after SIGTERM")
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// lockedBuffer lets the test read the process's stderr while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// send performs a request and returns status, headers and body.
func (g *gateway) send(t testing.TB, method, path, token string, body any, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, g.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// expect sends a request that must answer want and decodes the JSON reply
// into out (when non-nil).
func (g *gateway) expect(t testing.TB, want int, method, path, token string, body, out any) {
	t.Helper()
	status, _, data := g.send(t, method, path, token, body)
	if status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// client is a client of the gateway as the user with token.
func (g *gateway) client(t testing.TB, token string) *client.Client {
	t.Helper()
	c, err := client.New(g.url, token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// events follows the workflow's event stream (after the message with seq
// after) until its round ends or pauses, and returns every event.
func (g *gateway) events(t testing.TB, token, id string, after int64) []client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []client.Event
	for ev, err := range g.client(t, token).EventsAfter(ctx, id, after) {
		if err != nil {
			t.Fatalf("events of %s: %v", id, err)
		}
		out = append(out, ev)
	}
	if ctx.Err() != nil {
		t.Fatalf("workflow %s still running after 30 s", id)
	}
	return out
}

// waitDone follows the workflow's events until its round ends or pauses
// and returns the workflow then.
func (g *gateway) waitDone(t testing.TB, token, id string) wfView {
	t.Helper()
	g.events(t, token, id, 0)
	var w wfView
	g.expect(t, 200, "GET", "/api/v1/workflows/"+id, token, nil, &w)
	return w
}

// wfView and msgView are the API's JSON shapes as a client sees them:
// package client's types, decoded independently of httpapi's.
type (
	wfView  = client.Workflow
	msgView = client.Message
)

// messages returns all the workflow's messages, through the client.
func (g *gateway) messages(t *testing.T, token, id string) []msgView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := g.client(t, token).Messages(ctx, id, 0)
	if err != nil {
		t.Fatalf("messages of %s: %v", id, err)
	}
	return msgs
}

// runBinary runs a subcommand to completion and returns its stdout.
func runBinary(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayBin, args...)
	cmd.Env = binEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
