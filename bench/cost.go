package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// CostTokens is the token count of the cost comparison: a token per 4
// characters (rounded up) of everything sent or written.
func CostTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// The models of the comparison, priced per million tokens as the issue's
// table: the same model for both stages, and a model at a tenth of its
// price for Stage 2.
const (
	costModelName = "bench/model"
	costSmallName = "bench/small"
)

// costLimits are the history limits of the comparison's runs: the
// gateway's defaults.
var costLimits = placeholders.Limits{}

// CostPrices are the prices of the comparison's models.
var costPrices = economy.Prices{
	costModelName: {Input: 3.00, CachedInput: 0.30, Output: 15.00},
	costSmallName: {Input: 0.30, CachedInput: 0.03, Output: 1.50},
}

// CostRun is one workload run through the twostep engine: what the model
// received and answered, and what the round stored.
type CostRun struct {
	Workload CostWorkload
	Traces   []workflow.Trace
	Messages []workflow.Message
	Actions  []workflow.ActionSpec
	// Docs are the text of every document of the workflow, by id.
	Docs map[string]string
	// Requests are every request the model received, as sent: the output
	// schema as the tool, then the messages (requestText), by its messages.
	Requests map[string]string
	// Answer is the round's final answer; Calls the actions run, in order.
	Answer string
	Calls  []string
	// Shown and Needed count the references and facts Stage 1's replies
	// needed from their prompts and found there (a docItem reference per
	// document read, every figure and fact stated, every result an answer
	// gathers).
	Shown, Needed int
}

// RunCostWorkload runs w through the real twostep engine — the React mode
// with the embedded templates, the gateway's action registry with two
// actions of the workload added, the memory store — with a model that
// answers w's script by step number and records every request.
func RunCostWorkload(ctx context.Context, w CostWorkload) (*CostRun, error) {
	return runCost(ctx, w, nil)
}

// runCost is RunCostWorkload with a model that streams its replies at
// p's pace (nil: at once).
func runCost(ctx context.Context, w CostWorkload, p *pace) (*CostRun, error) {
	reg, err := costRegistry()
	if err != nil {
		return nil, err
	}
	set, err := templates.Load("")
	if err != nil {
		return nil, fmt.Errorf("templates.Load: %w", err)
	}
	store := memstore.New()
	m := &costModel{w: w, store: store, reg: reg, ready: make(chan struct{}), requests: map[string]string{}, lean: map[string]bool{}, pace: p}
	e, err := enginetest.NewEngine(engine.Config{InstanceID: "cost", MaxStepsLimit: max(engine.DefaultMaxStepsLimit, w.Steps())},
		store, m, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{HistoryBudget: costLimits.History, LatestBudget: costLimits.Latest}))})
	if err != nil {
		return nil, err
	}
	e.Start(ctx)
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(sctx) // a failed shutdown leaves nothing this process needs
	}()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: twostepUser, Prompt: w.Prompt, Mode: workflow.ModeReact,
		MaxSteps: w.Steps(), Documents: w.Uploads})
	if err != nil {
		return nil, err
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	m.start(wf.ID, msgs[0].Documents)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	end, err := e.Wait(ctx, wf.ID)
	if err != nil {
		return nil, err
	}
	run := &CostRun{Workload: w, Actions: reg.Actions(), Requests: m.recorded(), Docs: map[string]string{}}
	run.Shown, run.Needed = m.counts()
	if run.Traces, err = store.Traces(ctx, wf.ID); err != nil {
		return nil, err
	}
	if run.Messages, err = store.Messages(ctx, wf.ID, 0, 0); err != nil {
		return nil, err
	}
	for _, msg := range run.Messages {
		if msg.Role == workflow.RoleAction {
			run.Calls = append(run.Calls, actionCall(msg))
		}
		for _, d := range msg.Documents {
			c, err := store.DocumentContent(ctx, wf.ID, d.ID)
			if err != nil {
				return nil, err
			}
			run.Docs[d.ID] = string(c.Content)
		}
	}
	if end.Status != workflow.StatusCompleted {
		return run, fmt.Errorf("%s: round ended %s (%s): %s", w.Name, end.Status, end.StopReason, end.Error)
	}
	if last := run.Messages[len(run.Messages)-1]; last.Role == workflow.RoleAssistant {
		run.Answer = last.Text
	}
	return run, nil
}

// Check reports how the run differs from its workload's expected outcome.
func (r *CostRun) Check() error {
	var problems []string
	if r.Answer != r.Workload.Answer {
		problems = append(problems, fmt.Sprintf("answer %q, want %q", r.Answer, r.Workload.Answer))
	}
	if got, want := strings.Join(r.Calls, "\n"), strings.Join(r.Workload.Calls, "\n"); got != want {
		problems = append(problems, fmt.Sprintf("actions run:\n%s\nwant:\n%s", got, want))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", r.Workload.Name, strings.Join(problems, "; "))
	}
	return nil
}

// Report is the run's economy report (economy.Compute, as the gateway's
// route computes it) with every call priced as model, Stage 2's as
// stage2Model.
func (r *CostRun) Report(model, stage2Model string) economy.Report {
	traces := make([]workflow.Trace, len(r.Traces))
	for i, t := range r.Traces {
		t.Model = model
		if t.Stage == workflow.StageTwo {
			t.Model = stage2Model
		}
		traces[i] = t
	}
	return economy.Compute(economy.Input{
		Traces: traces, Messages: r.Messages, Actions: r.Actions, Prices: costPrices, Count: CostTokens,
		DocumentText: func(d workflow.Document) string { return r.Docs[d.ID] },
		RequestText:  func(t workflow.Trace) string { return r.Requests[promptKey(t.Prompt)] },
	})
}

// costModel is the scripted model of a cost run: Stage 1 answers the
// script's step numbered by the action messages committed so far (so a
// retry answers the same step again), Stage 2 the step Stage 1 chose last,
// a compaction call the workload's summary of the entries leaving the
// history. Usage is CostTokens of what was sent
// and written.
type costModel struct {
	w     CostWorkload
	store workflow.Store
	reg   workflow.Registry
	ready chan struct{}

	mu       sync.Mutex
	wfID     string
	uploads  []workflow.Document
	current  int
	chosen   costStep // the step Stage 1 chose last, as its reply wrote it
	requests map[string]string
	lean     map[string]bool
	// pace, when set, plays each reply at the latency model's pace,
	// streaming it to the request's Stream (latency.go).
	pace *pace
	// shown and needed count the references and facts Stage 1's replies
	// took from their prompts, and those they needed.
	shown, needed int
}

func (m *costModel) start(id string, uploads []workflow.Document) {
	m.mu.Lock()
	m.wfID, m.uploads = id, uploads
	m.mu.Unlock()
	close(m.ready)
}

func (m *costModel) counts() (shown, needed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shown, m.needed
}

func (m *costModel) recorded() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

// Generate answers one call.
func (m *costModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	select {
	case <-m.ready:
	case <-ctx.Done():
		return workflow.ModelResponse{}, ctx.Err()
	}
	sent := requestText(req)
	m.mu.Lock()
	m.requests[promptKey(req.Messages)] = sent
	m.mu.Unlock()
	var reply string
	var err error
	switch req.Stage {
	case workflow.StageOne:
		var msgs []workflow.Message
		msgs, err = m.store.Messages(ctx, m.wfID, 0, 0)
		if err != nil {
			return workflow.ModelResponse{}, err
		}
		step := 0
		for _, msg := range msgs {
			if msg.Role == workflow.RoleAction {
				step++
			}
		}
		if step >= len(m.w.steps) {
			return workflow.ModelResponse{}, workflow.Errorf(workflow.KindInvalid, "%s: no scripted step %d", m.w.Name, step+1)
		}
		m.mu.Lock()
		m.current = step
		s := m.w.steps[step]
		if s.params != nil {
			s.params = maps.Clone(s.params)
		}
		m.mu.Unlock()
		var shown, needed int
		reply, shown, needed, err = stage1Reply(s, promptKey(req.Messages), m.w.Uploads, m.leanFields(s.action))
		m.mu.Lock()
		m.shown, m.needed = m.shown+shown, m.needed+needed
		m.chosen = s
		m.mu.Unlock()
		if err != nil {
			return workflow.ModelResponse{}, workflow.Errorf(workflow.KindInvalid, "%s, step %d: %v", m.w.Name, step+1, err)
		}
	case workflow.StageTwo:
		m.mu.Lock()
		reply = stage2Reply(m.chosen)
		m.mu.Unlock()
	case workflow.StageCompact:
		if reply, err = m.summary(ctx, promptKey(req.Messages)); err != nil {
			return workflow.ModelResponse{}, err
		}
	default:
		return workflow.ModelResponse{}, workflow.Errorf(workflow.KindInvalid, "no script for stage %s", req.Stage)
	}
	if m.pace != nil {
		if err := m.pace.play(ctx, req.Stage, sent, CostTokens(sent), reply, req.Stream); err != nil {
			return workflow.ModelResponse{}, err
		}
	}
	return workflow.ModelResponse{Text: reply, Model: costModelName, PromptTokens: CostTokens(sent), CompletionTokens: CostTokens(reply),
		OutputMode: m.PlanOutput(req)}, nil
}

// summary is the compaction reply: the workload's summary of the entries
// leaving the history, found as the React mode finds them
// (placeholders.Compaction on the workflow's messages, at the default
// budget the bench runs with), not read from the prompt; it covers the
// entries the prompt shows.
func (m *costModel) summary(ctx context.Context, prompt string) (string, error) {
	if m.w.summary == nil {
		return "", workflow.Errorf(workflow.KindInvalid, "%s: no scripted compaction summary", m.w.Name)
	}
	msgs, err := m.store.Messages(ctx, m.wfID, 0, 0)
	if err != nil {
		return "", err
	}
	entries, _ := placeholders.CompactionWithin(msgs, costLimits)
	if len(entries) == 0 {
		return "", workflow.Errorf(workflow.KindInvalid, "%s: a compaction call with nothing to compact", m.w.Name)
	}
	// The prompt shows the entries that fit four history budgets
	// (prompts.Builder.Compact): the summary covers those it saw.
	shown := placeholders.CompactedEntriesFit(entries, 4*placeholders.DefaultHistoryBudget)
	text := m.w.summary(entries[shown-1].Step)
	for _, f := range figures(text) {
		if !strings.Contains(prompt, f) {
			return "", workflow.Errorf(workflow.KindInvalid, "%s: the compaction prompt does not show %q, which the summary states", m.w.Name, f)
		}
	}
	return text, nil
}

// PlanOutput plans tool mode for every call with an output schema, as an
// OpenAI-compatible or Anthropic model plans it by default: the prompts
// are then their native variants (the reply's shape given once, by the
// tool), as the plain loop's calls are native tool calls.
func (m *costModel) PlanOutput(req workflow.ModelRequest) workflow.OutputMode {
	if req.Output != nil {
		return workflow.OutputTool
	}
	return workflow.OutputText
}

// leanFields reports whether Stage 1's parser takes action's fields by name
// only (DESIGN §10.1), asked of the parser once per action: the script then
// writes them so, and else with the type, required flag and description.
func (m *costModel) leanFields(action string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	lean, ok := m.lean[action]
	if !ok {
		for _, s := range m.w.steps {
			if s.action == action {
				res := prompts.ParseStage1(selectionJSON(s, nil, true), prompts.Stage1Env{Registry: m.reg})
				lean = len(res.Problems) == 0
				break
			}
		}
		m.lean[action] = lean
	}
	return lean
}

// requestText is what a request sends, as an OpenAI-compatible call in tool
// mode sends it: the output schema as the one tool, then the messages.
func requestText(req workflow.ModelRequest) string {
	var b strings.Builder
	if req.Output != nil {
		tool, _ := json.Marshal(map[string]any{"name": req.Output.Name, "description": req.Output.Description,
			"parameters": json.RawMessage(req.Output.Schema)}) // the schema is JSON the prompts package wrote
		b.WriteString("tools: ")
		b.Write(tool)
		b.WriteByte('\n')
	}
	b.WriteString(promptKey(req.Messages))
	return b.String()
}

// promptKey is a prompt's messages as one text.
func promptKey(msgs []workflow.PromptMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// actionCall is an action message as CostWorkload.Calls lists it.
func actionCall(m workflow.Message) string {
	if m.Status != workflow.MessageSuccess {
		return m.Action + " failed: " + m.Text
	}
	switch m.Action {
	case NotesAction:
		text, _ := m.Parameters["text"].(string)
		return NotesAction + " " + text
	case RecordsAction:
		n, _ := m.Parameters["page"].(float64)
		return fmt.Sprintf("%s %d", RecordsAction, int(n))
	}
	names := make([]string, len(m.Documents))
	for i, d := range m.Documents {
		names[i] = d.Name
	}
	return m.Action + " " + strings.Join(names, " ")
}

// costRegistry is the gateway's action registry (its built-ins, among
// them document.extract) with the workloads' two actions added as
// external actions, validated and run as the gateway runs them.
func costRegistry() (*actions.Registry, error) {
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		return nil, fmt.Errorf("actions.New: %w", err)
	}
	var saved atomic.Int64
	skipped := reg.SetExternal("bench", []actions.ExternalAction{
		{Spec: workflow.ActionSpec{Name: NotesAction, Description: "Save one note for the user.", Effect: workflow.EffectWrite, Documents: workflow.DocumentsNone},
			Schema: map[string]any{"type": "object", "additionalProperties": false, "required": []any{"text"},
				"properties": map[string]any{"text": map[string]any{"type": "string", "minLength": 1, "description": "The note's text."}}},
			Run: func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
				text, _ := call.Parameters["text"].(string)
				return workflow.ActionResult{Text: fmt.Sprintf("Saved note %d (%d characters).", saved.Add(1), len(text))}, nil
			}},
		{Spec: workflow.ActionSpec{Name: RecordsAction, Description: "Read one page of the incident log.", Effect: workflow.EffectRead, Documents: workflow.DocumentsNone},
			Schema: map[string]any{"type": "object", "additionalProperties": false, "required": []any{"page"},
				"properties": map[string]any{"page": map[string]any{"type": "integer", "minimum": 1, "maximum": pageCount, "description": "The page number, from 1."}}},
			Run: func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
				n, _ := call.Parameters["page"].(float64)
				return workflow.ActionResult{Text: PageText(int(n))}, nil
			}},
	})
	if len(skipped) > 0 {
		return nil, fmt.Errorf("the workload actions were refused: %v", skipped)
	}
	return reg, nil
}
