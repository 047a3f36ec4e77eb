package telemetry_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/telemetry"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

const secret = "sk-very-secret-key-123"

// traced runs one React round over a scripted model with a tracer over an
// in-memory exporter; the workflow is created inside a span standing for
// the caller's HTTP request. It returns the finished spans.
func traced(t *testing.T, capture bool, replies ...string) (spans tracetest.SpanStubs, request trace.SpanContext, wf *workflow.Workflow) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := telemetry.New(tp, capture).Tracer(telemetry.Options{
		Redactor:     redact.New(secret),
		RequestModel: func(s workflow.Stage) string { return "openai/gpt-test-" + string(s) },
	})
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := enginetest.Config("a")
	cfg.Tracer = tr
	store := memstore.New()
	e := enginetest.StartEngine(t, cfg, store, scripted.New(replies...), enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))})

	ctx, req := tp.Tracer("caller").Start(context.Background(), "POST /api/v1/workflows")
	created, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "echo alpha; the key is " + secret, MaxSteps: 5})
	req.End()
	if err != nil {
		t.Fatal(err)
	}
	wf = enginetest.Wait(t, e, created.ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("workflow %s/%s: %s", wf.Status, wf.StopReason, wf.Error)
	}
	// The round span ends after the last commit is visible: wait for it.
	for range 200 {
		spans = exp.GetSpans()
		if slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool { return s.Name == telemetry.SpanRound }) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return exp.GetSpans(), req.SpanContext(), wf
}

// tree renders spans as indented names under root (children in start
// order); chat spans add their stage and attempt, actions their outcome.
func tree(spans tracetest.SpanStubs, root trace.SpanID, depth int) []string {
	var kids tracetest.SpanStubs
	for _, s := range spans {
		if s.Parent.SpanID() == root {
			kids = append(kids, s)
		}
	}
	slices.SortStableFunc(kids, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	var out []string
	for _, s := range kids {
		line := strings.Repeat("  ", depth) + s.Name
		if a := attrs(s); a["twostep.stage"] != "" {
			line += fmt.Sprintf(" [%s #%s %s]", a["twostep.stage"], a["twostep.attempt"], a["twostep.outcome"])
		}
		out = append(out, line)
		out = append(out, tree(spans, s.SpanContext.SpanID(), depth+1)...)
	}
	return out
}

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func find(spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// A round whose first Stage 1 reply is rejected and retried: the round
// joins the caller's trace, and its steps, model calls (with GenAI
// attributes), action and commits form the expected tree.
func TestRoundSpansWithRejectionAndRetry(t *testing.T) {
	t.Parallel()
	replies := slices.Concat([]string{"this is not JSON"}, enginetest.Echoes("alpha"), enginetest.Completes("done"))
	spans, req, wf := traced(t, false, replies...)

	want := []string{
		"store.commit",
		"workflow.round",
		"  workflow.step",
		"    chat gpt-test-stage1 [stage1 #1 rejected]",
		"    store.commit",
		"    chat gpt-test-stage1 [stage1 #2 ok]",
		"    store.commit",
		"    chat gpt-test-stage2 [stage2 #1 ok]",
		"    store.commit",
		"    execute_tool test.echo",
		"    store.commit",
		"  workflow.step",
		"    chat gpt-test-stage1 [stage1 #1 ok]",
		"    store.commit",
		"    chat gpt-test-stage2 [stage2 #1 ok]",
		"    store.commit",
	}
	if diff := cmp.Diff(want, tree(spans, req.SpanID(), 0)); diff != "" {
		t.Errorf("span tree under the request (-want +got):\n%s", diff)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != req.TraceID() {
			t.Errorf("span %s is in trace %s, want the caller's %s", s.Name, s.SpanContext.TraceID(), req.TraceID())
		}
	}
	chats := find(spans, "chat gpt-test-stage1")
	if len(chats) != 3 {
		t.Fatalf("%d stage 1 chat spans, want 3", len(chats))
	}
	a := attrs(chats[0])
	for k, v := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-test-stage1", "gen_ai.response.model": "scripted",
		"twostep.workflow.id": wf.ID, "twostep.round": "1", "twostep.step": "1",
		"twostep.stage": "stage1", "twostep.attempt": "1", "twostep.outcome": "rejected", "gen_ai.output.type": "json",
	} {
		if a[k] != v {
			t.Errorf("rejected chat span: %s = %q, want %q", k, a[k], v)
		}
	}
	if chats[0].SpanKind != trace.SpanKindClient {
		t.Errorf("chat span kind %s, want client", chats[0].SpanKind)
	}
	// Usage on the spans sums to the workflow's stats.
	var in, out int64
	for _, s := range spans {
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "gen_ai.usage.input_tokens":
				in += kv.Value.AsInt64()
			case "gen_ai.usage.output_tokens":
				out += kv.Value.AsInt64()
			}
		}
	}
	if in != int64(wf.Stats.PromptTokens) || out != int64(wf.Stats.CompletionTokens) || in == 0 {
		t.Errorf("span usage %d in / %d out, want the stats' %d / %d", in, out, wf.Stats.PromptTokens, wf.Stats.CompletionTokens)
	}
	action := find(spans, "execute_tool test.echo")
	if len(action) != 1 || attrs(action[0])["gen_ai.tool.name"] != "test.echo" {
		t.Errorf("action spans %v, want one with gen_ai.tool.name test.echo", action)
	}
}

// Prompt and reply text are not recorded unless content capture is on;
// with it on they are, with every secret redacted.
func TestContentCapture(t *testing.T) {
	t.Parallel()
	replies := slices.Concat(enginetest.Echoes("alpha"), enginetest.Completes("done"))
	for _, capture := range []bool{false, true} {
		t.Run(fmt.Sprint("capture=", capture), func(t *testing.T) {
			t.Parallel()
			spans, _, _ := traced(t, capture, replies...)
			chats := find(spans, "chat gpt-test-stage1")
			if len(chats) == 0 {
				t.Fatal("no chat spans")
			}
			a := attrs(chats[0])
			in, out := a["gen_ai.input.messages"], a["gen_ai.output.messages"]
			if !capture {
				if in != "" || out != "" {
					t.Errorf("content recorded without capture: %q / %q", in, out)
				}
				return
			}
			if !strings.Contains(in, "echo alpha; the key is "+redact.Redacted) || !strings.Contains(in, `"role":"user"`) {
				t.Errorf("gen_ai.input.messages = %.300s..., want the redacted user prompt", in)
			}
			if !strings.Contains(out, `"role":"assistant"`) || !strings.Contains(out, "echo alpha") {
				t.Errorf("gen_ai.output.messages = %q, want the reply", out)
			}
			for _, s := range spans {
				for _, kv := range s.Attributes {
					if strings.Contains(kv.Value.String(), secret) {
						t.Errorf("span %s attribute %s holds the secret", s.Name, kv.Key)
					}
				}
			}
		})
	}
}

// TraceParent and a round span's Origin round-trip through W3C form.
func TestTraceParentRoundTrip(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := telemetry.NewTracer(tp, telemetry.Options{})
	if got := tr.TraceParent(context.Background()); got != "" {
		t.Errorf("TraceParent without a span = %q, want empty", got)
	}
	origin := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	previous := "00-11111111111111111111111111111111-2222222222222222-01"
	ctx, span := tr.Start(context.Background(), workflow.SpanStart{Kind: workflow.SpanRound, WorkflowID: "wf_1", Origin: origin, Previous: previous})
	tp2 := tr.TraceParent(ctx)
	span.End(nil)
	got := exp.GetSpans()[0]
	if got.Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.Parent.SpanID().String() != "00f067aa0ba902b7" || !got.Parent.IsRemote() {
		t.Errorf("round parent = %v, want the origin's span, remote", got.Parent)
	}
	if len(got.Links) != 1 || got.Links[0].SpanContext.SpanID().String() != "2222222222222222" {
		t.Errorf("round links = %v, want the previous run", got.Links)
	}
	if !strings.HasPrefix(tp2, "00-4bf92f3577b34da6a3ce929d0e0e4736-"+got.SpanContext.SpanID().String()) {
		t.Errorf("TraceParent inside the round = %q, want the round span in the origin's trace", tp2)
	}
	if a := attrs(got); a["twostep.resumed"] != "true" {
		t.Errorf("round attributes %v, want twostep.resumed", a)
	}
}

// A round left by one instance (shut down during its Stage 2 call) and
// finished by another: the second run's round span stays in the caller's
// trace and links to the first run's, whose traceparent travelled in the
// stored workflow.
func TestResumedRoundLinksToPreviousRun(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := telemetry.New(tp, false).Tracer(telemetry.Options{})
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	modes := map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))}
	store, reg := memstore.New(), enginetest.NewRegistry()
	echo := enginetest.Echoes("alpha")

	cfgA := enginetest.Config("a")
	cfgA.Tracer, cfgA.ShutdownGrace = tr, time.Millisecond
	blocking := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n == 0 {
			return echo[0], nil
		}
		return "", scripted.ErrBlock
	}}
	a, err := engine.New(cfgA, store, blocking, reg, modes)
	if err != nil {
		t.Fatal(err)
	}
	a.Start(context.Background())
	ctx, req := tp.Tracer("caller").Start(context.Background(), "POST /api/v1/workflows")
	wf, err := a.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "echo alpha", MaxSteps: 5})
	req.End()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // wait for the Stage 1 commit: the run is in Stage 2
		got, err := store.GetWorkflow(context.Background(), wf.ID)
		if err == nil && got.Checkpoint != nil && got.Checkpoint.Phase == workflow.PhaseParameterize {
			break
		}
		if i > 1000 {
			t.Fatal("the first run never reached Stage 2")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

	cfgB := enginetest.Config("b")
	cfgB.Tracer = tr
	b := enginetest.StartEngine(t, cfgB, store, scripted.New(slices.Concat(echo[1:], enginetest.Completes("done"))...), reg, modes)
	if got := enginetest.Wait(t, b, wf.ID); got.Status != workflow.StatusCompleted {
		t.Fatalf("workflow %s: %s", got.Status, got.Error)
	}
	var rounds tracetest.SpanStubs
	for range 200 {
		if rounds = find(exp.GetSpans(), telemetry.SpanRound); len(rounds) == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(rounds) != 2 {
		t.Fatalf("%d round spans, want 2", len(rounds))
	}
	first, second := rounds[0], rounds[1]
	if first.StartTime.After(second.StartTime) {
		first, second = second, first
	}
	for _, s := range rounds {
		if s.SpanContext.TraceID() != req.SpanContext().TraceID() || s.Parent.SpanID() != req.SpanContext().SpanID() {
			t.Errorf("round span %s: parent %v, want the caller's request span", s.SpanContext.SpanID(), s.Parent)
		}
	}
	if len(first.Links) != 0 {
		t.Errorf("first run links %v, want none", first.Links)
	}
	if len(second.Links) != 1 || second.Links[0].SpanContext.SpanID() != first.SpanContext.SpanID() {
		t.Errorf("second run links %v, want the first run's span %s", second.Links, first.SpanContext.SpanID())
	}
	if attrs(second)["twostep.resumed"] != "true" || attrs(first)["twostep.resumed"] != "" {
		t.Errorf("twostep.resumed: first %q, second %q", attrs(first)["twostep.resumed"], attrs(second)["twostep.resumed"])
	}
}

// The model calls an action makes (ai.process) are chat spans under the
// action's execute_tool span, with stage action and their usage.
func TestActionModelCallsAreChatSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := telemetry.New(tp, false).Tracer(telemetry.Options{
		RequestModel: func(s workflow.Stage) string { return "anthropic/claude-test-" + string(s) },
	})
	script := []string{
		enginetest.Select(actions.AIProcessAction, "summarise the figures", nil, "", "aiPrompt"),
		enginetest.Params(map[string]any{"aiPrompt": "Summarise: revenue 12 -> 14."}),
	}
	model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if req.Stage == workflow.StageAction {
			return "Revenue grew.", nil
		}
		return script[n], nil
	}}
	reg, err := actions.New(actions.Config{}, &telemetry.ActionModel{Model: model, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := enginetest.Config("a")
	cfg.Tracer = tr
	store := memstore.New()
	e := enginetest.StartEngine(t, cfg, store, model, reg,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))})
	wf := enginetest.Wait(t, e, enginetest.Create(t, e, workflow.ModeReact, "summarise", 1).ID)
	if wf.Stats.ByStage.Get(workflow.StageAction).Calls != 1 {
		t.Fatalf("stats %+v, want one action model call", wf.Stats)
	}
	var spans tracetest.SpanStubs
	for range 200 {
		if spans = exp.GetSpans(); len(find(spans, telemetry.SpanRound)) == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	action := find(spans, "execute_tool ai.process")
	chats := find(spans, "chat claude-test-action")
	if len(action) != 1 || len(chats) != 1 {
		t.Fatalf("%d action and %d action chat spans, want 1 each", len(action), len(chats))
	}
	if chats[0].Parent.SpanID() != action[0].SpanContext.SpanID() {
		t.Errorf("the action's chat span is not under its execute_tool span")
	}
	a := attrs(chats[0])
	want := map[string]string{"twostep.stage": "action", "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-test-action",
		"twostep.outcome": "ok", "gen_ai.usage.input_tokens": fmt.Sprint(wf.Stats.ByStage.Get(workflow.StageAction).PromptTokens)}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("action chat span: %s = %q, want %q", k, a[k], v)
		}
	}
}

// A chat span carries the cached tokens the provider reported under the
// GenAI semantic conventions' names (the last Go semconv package that
// lists them is v1.41.0), beside input tokens that count them.
func TestChatSpanCarriesCachedTokens(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := telemetry.New(tp, false).Tracer(telemetry.Options{})
	model := &telemetry.ActionModel{Tracer: tr, Model: cachedModel{workflow.ModelResponse{
		Text: "ok", Model: "anthropic/claude-test", PromptTokens: 2050, CompletionTokens: 35, CachedTokens: 1800, CacheWriteTokens: 200,
	}}}
	if _, err := model.Generate(context.Background(), workflow.ModelRequest{Stage: workflow.StageAction}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	a := attrs(spans[0])
	for k, v := range map[string]string{
		string(semconv.GenAIUsageInputTokensKey):              "2050",
		string(semconv.GenAIUsageCacheReadInputTokensKey):     "1800",
		string(semconv.GenAIUsageCacheCreationInputTokensKey): "200",
		string(semconv.GenAIUsageOutputTokensKey):             "35",
	} {
		if a[k] != v {
			t.Errorf("%s = %q, want %q", k, a[k], v)
		}
	}
}

// cachedModel answers every call with its reply.
type cachedModel struct{ reply workflow.ModelResponse }

func (m cachedModel) Generate(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
	return m.reply, nil
}
