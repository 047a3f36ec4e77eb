package wiring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// DemoNotes is the sample document the demo workflow works on.
const DemoNotes = `Weekly sync, 14 November
- Billing migration: 80% of accounts moved; the last batch runs Tuesday.
- Support backlog down from 120 to 45 tickets after the new triage rota.
- Risk: the EU invoice template still shows the old VAT number.
- Decision: freeze pricing-page changes until the migration is done.
Owners: Ana (migration), Bo (support), Chen (invoices).
`

// DemoPrompt is the demo workflow's request.
const DemoPrompt = "Summarise the attached meeting notes as three bullet points and list the open risks."

// NewDemoModel returns the demo's scripted model: it extracts the notes,
// summarises them with ai.process and completes.
func NewDemoModel() NamedModel {
	return &scripted.Model{Forget: true, Reply: (&demoScript{}).reply}
}

// demoScript answers like a model that extracts the notes, summarises
// them with ai.process and completes. It takes the documents it works on
// from the request's facts (the newest step's or upload's), as the
// offline model does, never from the prompt's wording.
type demoScript struct {
	mu     sync.Mutex
	stage1 int
	chosen string
}

func (d *demoScript) reply(_ int, req workflow.ModelRequest) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch req.Stage {
	case workflow.StageOne:
		d.stage1++
		return d.select1(newestDocuments(req.Facts.Messages))
	case workflow.StageTwo:
		return d.parameters(), nil
	default: // ai.process's own model call
		return "- Billing migration is 80% done; last batch Tuesday.\n- Support backlog fell from 120 to 45.\n" +
			"- Pricing-page changes are frozen until the migration ends.\nOpen risk: the EU invoice template shows the old VAT number.", nil
	}
}

// select1 is the Stage 1 reply of the demo's next step; ref is the
// newest documents' reference.
func (d *demoScript) select1(ref string) (string, error) {
	var sel map[string]any
	switch d.stage1 {
	case 1:
		d.chosen = "document.extract"
		sel = selection(d.chosen, "Get the plain text of the uploaded notes", []string{ref},
			"The user uploaded meeting notes; plain text is enough.",
			field("format", "enum", false, "text"))
	case 2:
		d.chosen = "ai.process"
		sel = selection(d.chosen, "Summarise the notes in three bullets and list the risks", []string{ref},
			"Three bullet points plus the open risks, for a busy reader; save them as summary.md.",
			field("aiPrompt", "string", true, "the instruction for the summary"),
			field("resultFileName", "string", false, "name of the summary file"))
	default:
		d.chosen = workflow.CompleteAction
		sel = selection(d.chosen, "Give the user the summary", nil,
			"The summary is in summary.md: billing migration 80% done, support backlog 45, pricing frozen; "+
				"open risk: the EU invoice template shows the old VAT number. Answer with these bullets.",
			field("message", "string", true, "the final answer"))
	}
	data, err := json.Marshal(sel)
	return string(data), err
}

// newestDocuments returns the reference of the newest message's documents
// ("" when no message has any).
func newestDocuments(msgs []workflow.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; len(m.Documents) > 0 {
			return workflow.Reference{Kind: workflow.RefDocList, MessageID: m.ID, Label: m.DocumentsLabel}.String()
		}
	}
	return ""
}

// parameters is the Stage 2 reply for the step select1 chose.
func (d *demoScript) parameters() string {
	params := map[string]any{}
	switch d.chosen {
	case "document.extract":
		params["format"] = "text"
	case "ai.process":
		params["aiPrompt"] = "Summarise these meeting notes as three bullet points, then list the open risks."
		params["resultFileName"] = "summary.md"
	default:
		params["message"] = "Here is the summary (also in summary.md): billing migration 80% done, support backlog 45, " +
			"pricing frozen. Open risk: the EU invoice template shows the old VAT number."
	}
	data, _ := json.Marshal(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params})
	return string(data)
}

func selection(action, objective string, docs []string, context string, fields ...map[string]any) map[string]any {
	if docs == nil {
		docs = []string{}
	}
	return map[string]any{
		"action": action, "actionObjective": objective, "learnings": []string{},
		"requiredInputDocuments": docs, "requiredConnection": nil, "parametersContext": context,
		"parametersSchema": map[string]any{"fields": fields},
	}
}

func field(name, typ string, required bool, desc string) map[string]any {
	return map[string]any{"name": name, "type": typ, "required": required, "description": desc}
}

// RunDemo runs the sample workflow (DemoPrompt over DemoNotes) offline
// through the real engine, actions and memory store with the demo model,
// and prints every step to stdout; verbose adds the history each Stage 1
// prompt rendered.
func RunDemo(ctx context.Context, log zerolog.Logger, stdout io.Writer, verbose bool) error {
	cfg := Config{MaxSteps: 10, InsecureDev: true, LogFormat: "console", LLMProvider: llm.ProviderScripted}
	g, err := Wire(ctx, cfg, log, NewDemoModel())
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
		UserID: "demo", Prompt: DemoPrompt,
		Documents: []workflow.DocumentContent{{
			Document: workflow.Document{Name: "meeting-notes.txt", MimeType: "text/plain", Size: int64(len(DemoNotes))},
			Content:  []byte(DemoNotes),
		}},
	})
	if err != nil {
		return fmt.Errorf("create the demo workflow: %w", err)
	}
	fmt.Fprintf(stdout, "twostep demo: offline, scripted model, real engine and actions, memory store\n")
	fmt.Fprintf(stdout, "workflow %s: %q with meeting-notes.txt (%d bytes)\n\n", wf.ID, DemoPrompt, len(DemoNotes))
	if wf, err = awaitRound(runCtx, g, wf.ID); err != nil {
		return fmt.Errorf("wait for the demo round: %w", err)
	}
	return printRun(runCtx, stdout, g.Store, wf, verbose)
}

// awaitRound returns workflow id once its round no longer runs. The
// demo's round runs in this process, so each of its commits is published
// to g.Changes; the store is read once first, in case the round ended
// before the subscription.
func awaitRound(ctx context.Context, g *Gateway, id string) (*workflow.Workflow, error) {
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
