package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// demo runs the sample workflow offline through the real engine, actions
// and memory store, and prints every step; verbose adds the history each
// Stage 1 prompt rendered.
func demo(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, verbose bool) error {
	log, err := wiring.NewLogger(stderr, "console", orString(getenv("LOG_LEVEL"), "warn"), nil)
	if err != nil {
		return err
	}
	cfg := wiring.Config{MaxSteps: 10, InsecureDev: true, LogFormat: "console", LLMProvider: llm.ProviderScripted}
	g, err := wiring.Wire(ctx, cfg, log, wiring.NewDemoModel())
	if err != nil {
		return err
	}
	defer g.Close()
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g.Engine.Start(runCtx)
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		_ = g.Engine.Shutdown(sctx)
	}()

	wf, err := g.Engine.Create(runCtx, engine.NewWorkflow{
		UserID: "demo", Prompt: wiring.DemoPrompt,
		Documents: []workflow.DocumentContent{{
			Document: workflow.Document{Name: "meeting-notes.txt", MimeType: "text/plain", Size: int64(len(wiring.DemoNotes))},
			Content:  []byte(wiring.DemoNotes),
		}},
	})
	if err != nil {
		return fmt.Errorf("create the demo workflow: %w", err)
	}
	fmt.Fprintf(stdout, "twostep demo: offline, scripted model, real engine and actions, memory store\n")
	fmt.Fprintf(stdout, "workflow %s: %q with meeting-notes.txt (%d bytes)\n\n", wf.ID, wiring.DemoPrompt, len(wiring.DemoNotes))
	if wf, err = awaitRound(runCtx, g, wf.ID); err != nil {
		return fmt.Errorf("wait for the demo round: %w", err)
	}
	return printRun(runCtx, stdout, g.Store, wf, verbose)
}

// awaitRound returns workflow id once its round no longer runs. The
// demo's round runs in this process, so each of its commits is published
// to g.Changes; the store is read once first, in case the round ended
// before the subscription.
func awaitRound(ctx context.Context, g *wiring.Gateway, id string) (*workflow.Workflow, error) {
	changed, cancel := g.Changes.Subscribe(id)
	defer cancel()
	for {
		wf, err := g.Store.GetWorkflow(ctx, id)
		if err != nil || wf.Status != workflow.StatusRunning {
			return wf, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
