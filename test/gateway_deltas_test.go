package test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/client"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// TestDeltasReachAnotherInstance: two instances share one Redis; the
// round runs on the first (the second starts no engine), a client follows
// the workflow's event stream on the second and receives the deltas the
// first publishes, in order, then the committed message.
func TestDeltasReachAnotherInstance(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	prefix := testPrefix(t)
	release := make(chan string)
	steps := enginetest.Completes("unused")
	model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if req.Stage == workflow.StageTwo {
			return <-release, nil
		}
		return steps[0], nil
	}}
	wire := func() *wiring.Gateway {
		cfg := wiring.Config{MaxSteps: 5, LLMProvider: llm.ProviderScripted, RedisURL: url, RedisKeyPrefix: prefix,
			Users: []httpapi.Credential{{UserID: "alice", Token: gwAlice}}}
		cfg.File.Limits.ShutdownGrace = 50 * time.Millisecond
		g, err := wiring.Wire(context.Background(), cfg, zerolog.Nop(), model)
		if err != nil {
			t.Fatalf("wiring.Wire: %v", err)
		}
		t.Cleanup(func() { _ = g.Close() })
		return g
	}
	running, watching := wire(), wire()
	ctx, cancel := context.WithCancel(context.Background())
	running.Engine.Start(ctx)
	t.Cleanup(func() { running.Engine.Shutdown(context.Background()); cancel() })
	srv := httptest.NewServer(watching.API.Routes())
	t.Cleanup(srv.Close)

	wf, err := running.Engine.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "Greet the walrus"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(srv.URL, gwAlice)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 60*time.Second)
	defer scancel()
	events := make(chan client.Event, 64)
	go func() {
		defer close(events)
		for ev, err := range c.EventsAfter(sctx, wf.ID, 0) {
			if err != nil {
				return
			}
			events <- ev
		}
	}()
	bus := watching.Deltas.(*redisstore.DeltaBus)
	for !bus.Following(wf.ID) {
		select {
		case <-sctx.Done():
			t.Fatal("the second instance never followed the workflow's deltas")
		case <-time.After(5 * time.Millisecond):
		}
	}
	pieces := []string{"Hello", ", wal", "rus."}
	for _, p := range pieces {
		// What the first instance's engine publishes while Stage 2 streams.
		running.Deltas.PublishDelta(workflow.Delta{WorkflowID: wf.ID, UserID: "alice", Round: 1, Step: 1,
			Stage: workflow.StageTwo, Field: "message", Text: p})
	}
	got := ""
	for got != "Hello, walrus." {
		ev, ok := <-events
		if !ok {
			t.Fatalf("the stream ended after %q", got)
		}
		if ev.Type != "delta" {
			continue
		}
		var d struct{ Text, Field string }
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Field != "message" {
			t.Fatalf("delta %s: %v", ev.Data, err)
		}
		got += d.Text
	}
	release <- steps[1]
	for ev := range events {
		if ev.Type == "message" {
			var m struct{ Role, Text string }
			_ = json.Unmarshal(ev.Data, &m)
			if m.Role == "assistant" {
				if m.Text != "unused" {
					t.Errorf("committed answer %q", m.Text)
				}
				return
			}
		}
	}
	t.Fatal("the committed answer never arrived on the second instance")
}
