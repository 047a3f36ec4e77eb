package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
)

// demoNotes is the sample document the demo workflow works on.
const demoNotes = `Weekly sync, 14 November
- Billing migration: 80% of accounts moved; the last batch runs Tuesday.
- Support backlog down from 120 to 45 tickets after the new triage rota.
- Risk: the EU invoice template still shows the old VAT number.
- Decision: freeze pricing-page changes until the migration is done.
Owners: Ana (migration), Bo (support), Chen (invoices).
`

const demoPrompt = "Summarise the attached meeting notes as three bullet points and list the open risks."

// demoScript answers like a model that extracts the notes, summarises
// them with ai.process and completes. It reads the document references
// from the Stage 1 prompt, exactly as a real model must.
type demoScript struct {
	mu     sync.Mutex
	stage1 int
	chosen string
}

var docListRef = regexp.MustCompile(`docList:msg_[0-9a-z]+:[A-Za-z0-9_.-]+`)

func (d *demoScript) reply(req workflow.ModelRequest) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	prompt := promptText(req.Messages)
	switch req.Stage {
	case workflow.StageOne:
		d.stage1++
		return d.select1(prompt)
	case workflow.StageTwo:
		return d.parameters(), nil
	default: // ai.process's own model call
		return "- Billing migration is 80% done; last batch Tuesday.\n- Support backlog fell from 120 to 45.\n" +
			"- Pricing-page changes are frozen until the migration ends.\nOpen risk: the EU invoice template shows the old VAT number.", nil
	}
}

func (d *demoScript) select1(prompt string) (string, error) {
	ref := docListRef.FindString(prompt) // the index lists the newest first
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
			"Three bullet points plus the open risks, for a busy reader.",
			field("aiPrompt", "string", true, "the instruction for the summary"),
			field("resultFileName", "string", false, "name of the summary file"))
	default:
		d.chosen = workflow.CompleteAction
		sel = selection(d.chosen, "Give the user the summary", nil,
			"The summary document is ready; answer with its bullets.",
			field("message", "string", true, "the final answer"))
	}
	data, err := json.Marshal(sel)
	return string(data), err
}

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
	data, _ := json.Marshal(map[string]any{"schema": "parameters_v1", "parameters": params})
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

func promptText(msgs []workflow.PromptMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// demo runs the sample workflow offline through the real engine, actions
// and memory store, and prints every step; verbose adds the history each
// Stage 1 prompt rendered.
func demo(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, verbose bool) error {
	log, err := newLogger(stderr, "console", orString(getenv("LOG_LEVEL"), "warn"), nil)
	if err != nil {
		return err
	}
	script := &demoScript{}
	cfg := Config{MaxSteps: 10, InsecureDev: true, LogFormat: "console", LLMProvider: llm.ProviderScripted}
	g, err := wire(ctx, cfg, log, llm.NewScriptedFunc(script.reply))
	if err != nil {
		return err
	}
	defer g.close()
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g.engine.Start(runCtx)
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		_ = g.engine.Shutdown(sctx)
	}()

	wf, err := g.engine.Create(runCtx, workflow.NewWorkflow{
		UserID: "demo", Prompt: demoPrompt,
		Documents: []workflow.DocumentContent{{
			Document: workflow.Document{Name: "meeting-notes.txt", MimeType: "text/plain", Size: int64(len(demoNotes))},
			Content:  []byte(demoNotes),
		}},
	})
	if err != nil {
		return fmt.Errorf("create the demo workflow: %w", err)
	}
	fmt.Fprintf(stdout, "twostep demo: offline, scripted model, real engine and actions, memory store\n")
	fmt.Fprintf(stdout, "workflow %s: %q with meeting-notes.txt (%d bytes)\n\n", wf.ID, demoPrompt, len(demoNotes))
	if wf, err = g.engine.Wait(runCtx, wf.ID); err != nil {
		return fmt.Errorf("wait for the demo round: %w", err)
	}
	return printRun(runCtx, stdout, g.store, wf, verbose)
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
