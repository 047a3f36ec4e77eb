package test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// scriptLLM is an OpenAI-compatible model server whose replies depend only
// on the prompt, so a call repeated after a crash answers the same: Stage 1
// counts the action steps in the history and picks the next one; Stage 2
// reads what Stage 1 put in parametersContext. Each gateway process gets
// its own base URL (/<proc>/v1), so every call is known by workflow, stage,
// step and process. Calls may be slowed down and held.
type scriptLLM struct {
	srv *httptest.Server
	// steps is how many actions a round runs before it completes; post
	// makes step 1 a POST through http.request on connection crm instead
	// of document.generate.
	steps int
	post  bool
	delay func() time.Duration

	mu    sync.Mutex
	calls []llmCall
	// holds are keys ("tag/stage/n") whose first call waits until the
	// channel is closed; held is closed when such a call arrived.
	holds map[string]*hold
}

type hold struct {
	arrived, release chan struct{}
	used             bool
}

// llmCall is one call the server received.
type llmCall struct {
	tag, stage, proc string
	n                int
	at               time.Time
	cut              bool // the caller went away before the answer
}

func newScriptLLM(t testing.TB, steps int, post bool, delay func() time.Duration) *scriptLLM {
	m := &scriptLLM{steps: steps, post: post, delay: delay, holds: map[string]*hold{}}
	m.srv = httptest.NewServer(m)
	t.Cleanup(m.srv.Close)
	return m
}

// baseURL is the OPENAI_BASE_URL of gateway process proc.
func (m *scriptLLM) baseURL(proc string) string { return m.srv.URL + "/" + proc + "/v1" }

// holdFirst makes the first call of tag's stage at step n wait for release;
// arrived is closed when it came.
func (m *scriptLLM) holdFirst(tag, stage string, n int) (arrived chan struct{}, release func()) {
	h := &hold{arrived: make(chan struct{}), release: make(chan struct{})}
	m.mu.Lock()
	m.holds[fmt.Sprintf("%s/%s/%d", tag, stage, n)] = h
	m.mu.Unlock()
	var once sync.Once
	return h.arrived, func() { once.Do(func() { close(h.release) }) }
}

var (
	scriptRequest = regexp.MustCompile(`# User request\n(\S+)`)
	historyAction = regexp.MustCompile(`(?m)^- \[round \d+, step \d+\] action [a-z]`)
	scriptKey     = regexp.MustCompile(`key=(\S+) n=(\d+)`)
)

func (m *scriptLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var prompt strings.Builder
	for _, msg := range req.Messages {
		prompt.WriteString(contentText(msg.Content) + "\n")
	}
	p := prompt.String()
	call := llmCall{proc: strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0], at: time.Now()}
	var reply any
	switch {
	case strings.Contains(p, "You are the planner"):
		call.stage, call.n = "stage1", len(historyAction.FindAllString(p, -1))+1
		if mm := scriptRequest.FindStringSubmatch(p); mm != nil {
			call.tag = mm[1]
		}
		reply = m.stage1(call.tag, call.n)
	default:
		call.stage = "stage2"
		if mm := scriptKey.FindStringSubmatch(p); mm != nil {
			call.tag = mm[1]
			call.n, _ = strconv.Atoi(mm[2])
		}
		reply = m.stage2(call.tag, call.n)
	}
	m.mu.Lock()
	i := len(m.calls)
	m.calls = append(m.calls, call)
	h := m.holds[fmt.Sprintf("%s/%s/%d", call.tag, call.stage, call.n)]
	if h != nil && !h.used {
		h.used = true
		close(h.arrived)
	} else {
		h = nil
	}
	m.mu.Unlock()
	wait := time.After(0)
	if m.delay != nil {
		wait = time.After(m.delay())
	}
	if h != nil {
		<-h.release
	}
	select {
	case <-r.Context().Done():
		m.mu.Lock()
		m.calls[i].cut = true
		m.mu.Unlock()
		return
	case <-wait:
	}
	content, _ := json.Marshal(reply)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-script", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (m *scriptLLM) stage1(tag string, n int) any {
	sel := map[string]any{"learnings": []string{}, "requiredInputDocuments": []string{}, "requiredConnection": nil}
	ctx := fmt.Sprintf("key=%s n=%d", tag, n)
	switch {
	case n > m.steps:
		sel["action"], sel["actionObjective"] = "workflow.complete", "answer the user"
		sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message", "type": "string", "required": true}}}
	case m.post && n == 1:
		sel["action"], sel["actionObjective"], sel["requiredConnection"] = "http.request", "create the account", "crm"
		sel["parametersSchema"] = map[string]any{"fields": []any{
			map[string]any{"name": "method", "type": "enum", "required": true},
			map[string]any{"name": "path", "type": "string", "required": true}}}
	default:
		sel["action"], sel["actionObjective"] = "document.generate", "write a note"
		sel["parametersSchema"] = map[string]any{"fields": []any{
			map[string]any{"name": "fileName", "type": "string", "required": true},
			map[string]any{"name": "content", "type": "string", "required": true}}}
	}
	sel["parametersContext"] = ctx
	return sel
}

func (m *scriptLLM) stage2(tag string, n int) any {
	params := map[string]any{}
	switch {
	case n > m.steps:
		params["message"] = "final answer for " + tag
	case m.post && n == 1:
		params["method"], params["path"] = "POST", "/accounts"
	default:
		params["fileName"], params["content"] = scriptFile(tag, n), scriptContent(tag, n)
	}
	return map[string]any{"schema": "parameters_v1", "parameters": params}
}

func scriptFile(tag string, n int) string    { return fmt.Sprintf("%s-s%d.txt", tag, n) }
func scriptContent(tag string, n int) string { return fmt.Sprintf("generated for %s step %d", tag, n) }

// snapshot returns a copy of every call so far.
func (m *scriptLLM) snapshot() []llmCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmCall(nil), m.calls...)
}

// startRedisServer runs a redis-server of the test's own on a free port
// (so no other test's gateways see its keys) and returns its URL and
// process.
func startRedisServer(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	redisURL(t) // skips without Redis, fails under CI without it
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed: %v", err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	srv := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGCONT)
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	waitRedis(t, addr)
	return "redis://" + addr + "/0", srv
}
