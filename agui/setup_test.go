package agui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/agui"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

const (
	alice = "alice-token-000000001"
	bob   = "bob-token-00000000002"
)

// The scripted replies: Stage 1 choosing to answer or to write a
// document, and Stage 2's parameters.
const (
	chooseAnswer = `{"action": "workflow.complete", "actionObjective": "answer", "learnings": [], "requiredInputDocuments": [],
		"requiredConnection": null, "parametersContext": "answer", "parametersSchema": {"fields": [{"name": "message", "type": "string", "required": true}]}}`
	chooseNote = `{"action": "document.generate", "actionObjective": "write the note", "learnings": [], "requiredInputDocuments": [],
		"requiredConnection": null, "parametersContext": "a short note", "parametersSchema": {"fields": [{"name": "fileName", "type": "string", "required": true}, {"name": "content", "type": "string", "required": true}]}}`
	noteParams = `{"schema": "parameters_v1", "parameters": {"fileName": "note.md", "content": "# Note"}}`
)

func answer(text string) string {
	data, _ := json.Marshal(map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"message": text}})
	return string(data)
}

// gateway is a wired gateway on the memory store whose model answers
// from replies, in call order; a reply "" blocks the call until the test
// sends the reply on release.
type gateway struct {
	*wiring.Gateway
	url     string
	release chan string
}

func newGateway(t *testing.T, yaml string, replies ...string) *gateway {
	t.Helper()
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GATEWAY_TOKENS": "alice:" + alice + ",bob:" + bob, "LLM_PROVIDER": "scripted", "GATEWAY_CONFIG": file}
	cfg, err := wiring.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{release: make(chan string)}
	model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n >= len(replies) {
			return "", workflow.Errorf(workflow.KindUnavailable, "no reply scripted for call %d", n+1)
		}
		if replies[n] == "" {
			return <-g.release, nil
		}
		return replies[n], nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g.Gateway, err = wiring.Wire(ctx, cfg, zerolog.New(io.Discard), model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	g.Engine.Start(ctx)
	t.Cleanup(func() { g.Engine.Shutdown(context.Background()) })
	srv := httptest.NewServer(g.API.Routes())
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// run posts a RunAgentInput and returns its events as they arrive (the
// channel closes with the stream), or the HTTP status of a refusal.
func (g *gateway) run(t *testing.T, token string, in map[string]any) (<-chan agui.Event, int) {
	t.Helper()
	for k, v := range map[string]any{"runId": "run-" + workflow.NewID(""), "tools": []any{}, "context": []any{}, "state": map[string]any{}} {
		if _, ok := in[k]; !ok {
			in[k] = v
		}
	}
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", g.url+"/api/v1/agui", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		_ = resp.Body.Close()
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	out := make(chan agui.Event, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e agui.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Errorf("event %s: %v", data, err)
				return
			}
			out <- e
		}
	}()
	return out, 200
}

// userRun is a run input whose last user message is prompt.
func userRun(thread, prompt string) map[string]any {
	return map[string]any{"threadId": thread, "messages": []any{
		map[string]any{"id": "m0", "role": "user", "content": "an earlier message the workflow has"},
		map[string]any{"id": "m1", "role": "assistant", "content": "an earlier answer"},
		map[string]any{"id": "m2", "role": "user", "content": prompt},
	}}
}

// next returns the next event or fails when the stream ends first.
func next(t *testing.T, events <-chan agui.Event) agui.Event {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return agui.Event{}
}

// expect reads the next events and checks their types.
func expect(t *testing.T, events <-chan agui.Event, types ...string) []agui.Event {
	t.Helper()
	out := make([]agui.Event, 0, len(types))
	for _, typ := range types {
		e := next(t, events)
		if e.Type != typ {
			t.Fatalf("event %d is %s %+v, want %s", len(out)+1, e.Type, e, typ)
		}
		out = append(out, e)
	}
	return out
}

// rest reads the stream to its end.
func rest(events <-chan agui.Event) []agui.Event {
	var out []agui.Event
	for e := range events {
		out = append(out, e)
	}
	return out
}

func typesOf(events []agui.Event) string {
	var names []string
	for _, e := range events {
		names = append(names, e.Type)
	}
	return strings.Join(names, " ")
}
