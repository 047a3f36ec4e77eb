package test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeLLM is an OpenAI-compatible chat completions server scripted per
// test: it answers Stage 1, Stage 2 and ai.process prompts by reading them,
// as a real model would. It records whether every call carried the API key.
type fakeLLM struct {
	srv *httptest.Server

	mu      sync.Mutex
	steps   map[string]int  // Stage 1 calls per user request
	block   map[string]bool // user-request keys whose next call blocks
	calls   int
	badAuth int
	// blocked counts calls that started blocking; cancelled those the
	// gateway then cancelled.
	blocked, cancelled int
	// released ends every blocked call with its normal reply (releaseBlocked).
	released    chan struct{}
	releaseOnce sync.Once
	// delay, when set, is how long every call takes (a slow model).
	delay time.Duration
}

func newFakeLLM(t testing.TB) *fakeLLM {
	f := &fakeLLM{steps: map[string]int{}, block: map[string]bool{}, released: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the server's root; the gateway is given URL()+"/v1".
func (f *fakeLLM) URL() string { return f.srv.URL }

// blockNext makes the next model call of the request whose user prompt
// contains key hang until the gateway cancels it.
func (f *fakeLLM) blockNext(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.block[key] = true
}

// releaseBlocked lets every blocked call (and every later one) answer
// normally, so a gateway draining on SIGTERM is not held by them.
func (f *fakeLLM) releaseBlocked() { f.releaseOnce.Do(func() { close(f.released) }) }

type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var system, user strings.Builder
	for _, m := range req.Messages {
		if m.Role == "system" {
			system.WriteString(contentText(m.Content))
		} else {
			user.WriteString(contentText(m.Content))
		}
	}
	reply, blocked := f.reply(r.Header.Get("Authorization"), system.String(), user.String())
	f.mu.Lock()
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(delay):
		}
	}
	if blocked {
		select {
		case <-r.Context().Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return
		case <-f.released:
			reply, _ = f.reply(r.Header.Get("Authorization"), system.String(), user.String())
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply}}},
		"usage": map[string]any{"prompt_tokens": (system.Len() + user.Len()) / 4, "completion_tokens": len(reply) / 4,
			"total_tokens": (system.Len()+user.Len())/4 + len(reply)/4},
	})
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

var (
	// The request ends Stage 1's cacheable block; the history follows.
	userRequest = regexp.MustCompile(`(?s)# User request\n(.*?)\n*# (?:Earlier steps|Workflow history)`)
	docListRefs = regexp.MustCompile(`docList:msg_[0-9a-z]+:[A-Za-z0-9_.-]+`)
	keyInText   = regexp.MustCompile(`key=([A-Za-z0-9_-]+)`)
)

// reply answers one call. The script: Stage 1 step 1 extracts the newest
// document list when there is one, else generates a document; step 2
// completes. Stage 2 fills what Stage 1's parametersContext carried.
func (f *fakeLLM) reply(auth, system, user string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if auth != "Bearer "+gwAPIKey {
		f.badAuth++
	}
	key := "none"
	if m := userRequest.FindStringSubmatch(user); m != nil {
		key = strings.TrimSpace(m[1])
	} else if m := keyInText.FindStringSubmatch(user); m != nil {
		key = m[1]
	}
	for k := range f.block {
		if strings.Contains(user, k) {
			delete(f.block, k)
			f.blocked++
			return "", true
		}
	}
	switch {
	case strings.Contains(system, "You are the planner"):
		f.steps[key]++
		return stage1Reply(f.steps[key], key, docListRefs.FindString(user)), false
	case strings.Contains(system, "Fill in the parameters of the chosen action"):
		return stage2Reply(user), false
	default: // ai.process
		return "processed " + key, false
	}
}

func stage1Reply(step int, key, ref string) string {
	tag := tagOf(key)
	sel := map[string]any{"learnings": []string{}, "requiredConnection": nil, "requiredInputDocuments": []string{}}
	switch {
	case step == 1 && ref != "":
		sel["action"], sel["actionObjective"] = "document.extract", "read the uploaded text"
		sel["requiredInputDocuments"] = []string{ref}
		sel["parametersContext"] = "op=extract key=" + tag
		sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "format", "type": "enum", "required": false}}}
	case step == 1:
		sel["action"], sel["actionObjective"] = "document.generate", "write a note"
		sel["parametersContext"] = "op=generate key=" + tag
		sel["parametersSchema"] = map[string]any{"fields": []any{
			map[string]any{"name": "fileName", "type": "string", "required": true},
			map[string]any{"name": "content", "type": "string", "required": true}}}
	default:
		sel["action"], sel["actionObjective"] = "workflow.complete", "answer the user"
		sel["parametersContext"] = "op=complete key=" + tag
		sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message", "type": "string", "required": true}}}
	}
	data, _ := json.Marshal(sel)
	return string(data)
}

func stage2Reply(prompt string) string {
	tag := "none"
	if m := keyInText.FindStringSubmatch(prompt); m != nil {
		tag = m[1]
	}
	params := map[string]any{}
	switch {
	case strings.Contains(prompt, "op=extract"):
		params["format"] = "text"
	case strings.Contains(prompt, "op=generate"):
		params["fileName"], params["content"] = tag+".txt", "generated for "+tag
	default:
		params["message"] = "final answer for " + tag
	}
	data, _ := json.Marshal(map[string]any{"schema": "parameters_v1", "parameters": params})
	return string(data)
}

// tagOf turns a user request into a token safe to carry in key=...: its
// first word, which the tests make unique.
func tagOf(key string) string {
	f := strings.Fields(key)
	if len(f) == 0 {
		return "none"
	}
	return strings.Trim(f[0], ".,:;")
}

func (f *fakeLLM) stats() (calls, badAuth int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.badAuth
}

// waitCancelled waits until n blocked calls were cancelled by the gateway.
func (f *fakeLLM) waitCancelled(t *testing.T, n int) {
	t.Helper()
	f.waitCount(t, n, "cancelled", func() int { return f.cancelled })
}

// waitBlocked waits until n calls are (or were) blocking.
func (f *fakeLLM) waitBlocked(t *testing.T, n int) {
	t.Helper()
	f.waitCount(t, n, "blocking", func() int { return f.blocked })
}

func (f *fakeLLM) waitCount(t *testing.T, n int, what string, count func() int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		got := count()
		f.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d model calls %s, want %d", got, what, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
