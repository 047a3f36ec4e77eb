package test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestStartupFailures: the gateway refuses to start with one clear line on
// stderr and exit code 1.
func TestStartupFailures(t *testing.T) {
	t.Parallel()
	badYAML := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(badYAML, []byte("limits:\n  maxBodyBytess: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   []string
		want  string
		lines int // lines on stderr; 0 means any
	}{
		{"redis unreachable", []string{"REDIS_URL=redis://:hunter2@127.0.0.1:1/0"}, "redis is configured (REDIS_URL) but unreachable", 1},
		{"no tokens", []string{"GATEWAY_TOKENS=", "GATEWAY_ADMIN_TOKENS="}, "no tokens configured", 1},
		{"malformed tokens", []string{"GATEWAY_TOKENS=alice"}, "GATEWAY_TOKENS: entry 1 is not userId:token", 0},
		{"bad max steps and log format", []string{"GATEWAY_MAX_STEPS=500", "LOG_FORMAT=xml"}, "GATEWAY_MAX_STEPS must be between 1 and 100", 0},
		{"unknown config key", []string{"GATEWAY_CONFIG=" + badYAML}, "maxBodyBytess", 0},
		{"unknown command", []string{"ARGS=bogus"}, "unknown command", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := launchArgs(t, tt.env)
			var err error
			select {
			case err = <-g.done:
			case <-time.After(15 * time.Second):
				_ = g.cmd.Process.Kill()
				t.Fatal("the gateway kept running")
			}
			if code := g.cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d (%v), want 1", code, err)
			}
			out := strings.TrimSpace(g.stderr.String())
			if !strings.Contains(out, tt.want) {
				t.Errorf("stderr %q lacks %q", out, tt.want)
			}
			if n := len(strings.Split(out, "\n")); tt.lines > 0 && n != tt.lines {
				t.Errorf("stderr has %d lines, want %d:\n%s", n, tt.lines, out)
			}
			if strings.Contains(out, "hunter2") || strings.Contains(out, gwAPIKey) {
				t.Errorf("stderr leaks a secret: %s", out)
			}
		})
	}
	t.Run("both config problems at once", func(t *testing.T) {
		t.Parallel()
		g := launchArgs(t, []string{"GATEWAY_MAX_STEPS=0", "LOG_FORMAT=xml"})
		<-g.done
		out := g.stderr.String()
		if !strings.Contains(out, "GATEWAY_MAX_STEPS") || !strings.Contains(out, "LOG_FORMAT") {
			t.Errorf("not every problem reported: %s", out)
		}
	})
}

// launchArgs starts the binary; ARGS=... in env becomes its arguments.
func launchArgs(t *testing.T, env []string) *gateway {
	t.Helper()
	var args, rest []string
	for _, e := range env {
		if a, ok := strings.CutPrefix(e, "ARGS="); ok {
			args = strings.Fields(a)
			continue
		}
		rest = append(rest, e)
	}
	return launchWith(t, nil, args, rest)
}

// TestVersionAndDemo runs the two offline subcommands.
func TestVersionAndDemo(t *testing.T) {
	t.Parallel()
	out, err := runBinary(t, "version")
	if err != nil || !strings.HasPrefix(out, "twostep gateway ") {
		t.Errorf("version: %q %v", out, err)
	}
	out, err = runBinary(t, "demo", "--help")
	if err != nil || !strings.Contains(out, "usage: gateway") || !strings.Contains(out, "LLM_OUTPUT_MODE") {
		t.Errorf("demo --help: %q %v", out, err)
	}
	out, err = runBinary(t, "demo")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"step 1  stage 1 chose document.extract", "stage 2 prompt", "beside stage 1's",
		"action document.extract [success]", "step 2  stage 1 chose ai.process", "action ai.process [success]",
		"step 3  stage 1 chose workflow.complete", "final answer:", "status completed (stop reason completed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestConcurrentWorkflows runs 50 workflows at once and checks every one
// completed with its own, non-interleaved messages.
func TestConcurrentWorkflows(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte("limits:\n  maxRunningPerUser: 100\n  workers: 16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	g := startGateway(t, model, "GATEWAY_CONFIG="+cfg)
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var wf wfView
			docs := []map[string]string{}
			if i%2 == 0 {
				docs = append(docs, map[string]string{"name": fmt.Sprintf("c%02d.txt", i), "content": b64s(fmt.Sprintf("content of c%02d", i))})
			}
			status, _, body := g.send(t, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": fmt.Sprintf("c%02d go", i), "documents": docs})
			if status != http.StatusCreated {
				t.Errorf("create %d: %d %s", i, status, body)
				return
			}
			if err := jsonUnmarshal(body, &wf); err != nil {
				t.Error(err)
			}
			ids[i] = wf.ID
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, id := range ids {
		tag := fmt.Sprintf("c%02d", i)
		if w := g.waitDone(t, gwAlice, id); w.Status != "completed" {
			t.Errorf("%s: %+v", tag, w)
			continue
		}
		msgs := g.messages(t, gwAlice, id)
		if len(msgs) != 3 {
			t.Errorf("%s: %d messages", tag, len(msgs))
			continue
		}
		if msgs[0].Text != tag+" go" || msgs[2].Text != "final answer for "+tag {
			t.Errorf("%s: messages of another workflow: %q / %q", tag, msgs[0].Text, msgs[2].Text)
		}
		for j, m := range msgs {
			if m.Seq != int64(j+1) {
				t.Errorf("%s: seq %d at %d", tag, m.Seq, j)
			}
		}
		want := tag + ".txt" // generated, or the extracted upload
		if len(msgs[1].Documents) != 1 || msgs[1].Documents[0].Name != want {
			t.Errorf("%s: action documents %+v, want %s", tag, msgs[1].Documents, want)
		}
	}
}

// TestRestartResumesRunningRound (Redis): a round cut by SIGTERM mid model
// call (one that outlasts limits.shutdownGrace) stays running and the next
// gateway on the same Redis finishes it.
func TestRestartResumesRunningRound(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	model.blockNext("restart1")
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  shutdownGrace: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g1 := launch(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	waitHealthy(t, g1)
	var wf wfView
	g1.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "restart1 go"}, &wf)
	model.waitBlocked(t, 1)
	if err := g1.stop(); err != nil {
		t.Fatalf("first gateway: %v\n%s", err, g1.stderr)
	}
	g2 := startGateway(t, model, "REDIS_URL="+url)
	if w := g2.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("after restart: %+v", w)
	}
	msgs := g2.messages(t, gwAlice, wf.ID)
	if n := len(msgs); n != 3 || msgs[2].Text != "final answer for restart1" {
		t.Errorf("messages after restart: %+v", msgs)
	}
	g2.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+wf.ID, gwAlice, nil, nil)
}

// TestEventsFromAnotherInstance (Redis): a client streams events from one
// gateway while the round runs on another sharing the store.
func TestEventsFromAnotherInstance(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	g1 := startGateway(t, model, "REDIS_URL="+url)
	g2 := startGateway(t, model, "REDIS_URL="+url)
	var wf wfView
	g1.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "twoinst1 go"}, &wf)
	var roles []string
	for _, e := range g2.events(t, gwAlice, wf.ID, 0) {
		if e.Type == "message" {
			roles = append(roles, e.Message.Role)
		}
	}
	if got := strings.Join(roles, ","); got != "user,action,assistant" {
		t.Errorf("events via the other instance: %s", got)
	}
	g2.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+wf.ID, gwAlice, nil, nil)
}

// redisURL returns REDIS_URL after a ping; it skips without one, but fails
// when CI is set.
func redisURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but REDIS_URL is not")
		}
		t.Skip("REDIS_URL not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client := redis.NewClient(opt)
	defer client.Close()
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("REDIS_URL unusable: %v", err)
	}
	return url
}

// clusterURL returns REDIS_CLUSTER_URL (a Redis Cluster node, more seeds as
// addr= parameters; .ci/redis-cluster.sh starts one) after a ping of the
// cluster; it skips without one, but fails when CI is set.
func clusterURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("REDIS_CLUSTER_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but REDIS_CLUSTER_URL is not")
		}
		t.Skip("REDIS_CLUSTER_URL not set")
	}
	opt, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatalf("REDIS_CLUSTER_URL: %v", err)
	}
	client := redis.NewClusterClient(opt)
	defer client.Close()
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("REDIS_CLUSTER_URL unusable: %v", err)
	}
	return url
}

// TestStartupRefusesAClusterDatabase: a Redis Cluster has only database
// 0, so a REDIS_URL naming a cluster node with another database number
// stops the gateway at start with a message naming the database.
func TestStartupRefusesAClusterDatabase(t *testing.T) {
	t.Parallel()
	opt, err := redis.ParseClusterURL(clusterURL(t))
	if err != nil {
		t.Fatal(err)
	}
	g := launchArgs(t, []string{"REDIS_URL=redis://" + opt.Addrs[0] + "/3"})
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		t.Fatal("the gateway kept running")
	}
	out := g.stderr.String()
	if code := g.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out, "REDIS_URL is unusable") || !strings.Contains(out, "database 3") {
		t.Errorf("exit code %d, stderr %q; want 1 and REDIS_URL is unusable naming database 3", code, out)
	}
}

// TestStartupConfigProblemsNameLineAndKey: a newcomer's broken YAML file is
// reported problem by problem with the file, the true line, the key path as
// written, a suggestion for a misspelt key, no Go type name, and one
// problem for one unset variable.
func TestStartupConfigProblemsNameLineAndKey(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := `limits:
  maxBodyByts: 5
  workers: many
httpActions:
  - name: tickets.create
    description: Create a ticket
    effct: write
    url: https://tickets.example/api
    headers:
      Authorization: "Bearer ${TIX_TOKEN_E2E_UNSET}"
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launchArgs(t, []string{"GATEWAY_CONFIG=" + file})
	<-g.done
	out := g.stderr.String()
	for _, want := range []string{
		"GATEWAY_CONFIG " + file + ` line 2: limits.maxBodyByts: unknown key "maxBodyByts"; did you mean "maxBodyBytes"?`,
		"GATEWAY_CONFIG " + file + ` line 3: limits.workers: "many" is a string; want a whole number`,
		"GATEWAY_CONFIG " + file + ` line 7: httpActions[0].effct: unknown key "effct"; did you mean "effect"?`,
		"GATEWAY_CONFIG " + file + ` line 10: httpActions[0]: header "Authorization": environment variable TIX_TOKEN_E2E_UNSET is not set`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "TIX_TOKEN_E2E_UNSET"); n != 1 {
		t.Errorf("the unset variable is named %d times, want once:\n%s", n, out)
	}
	for _, goName := range []string{"wiring.", "actions.", "FileLimits", "HTTPActionConfig"} {
		if strings.Contains(out, goName) {
			t.Errorf("stderr names Go type %q:\n%s", goName, out)
		}
	}
}
