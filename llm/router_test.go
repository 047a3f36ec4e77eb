package llm

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// routeTo is a Route to an OpenAI-compatible fake named model.
func routeTo(t *testing.T, srv *fakeOpenAI, model string, maxTokens int) Route {
	m := newTestModel(t, srv.url(), nil, func(c *Config) {
		c.Model, c.RetryBaseDelay, c.MaxRetryDelay = model, time.Millisecond, 5*time.Millisecond
	})
	return Route{Name: m.Name(), Model: m, MaxTokens: maxTokens}
}

func answering(text string) func(int, *http.Request, chatRequest, http.ResponseWriter) {
	return func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) { writeCompletion(w, text, 5, 3) }
}

func TestRouterSendsEachStageToItsModel(t *testing.T) {
	t.Parallel()
	strong, small := newFakeOpenAI(t, answering("strong")), newFakeOpenAI(t, answering("small"))
	r := NewRouter(routeTo(t, strong, "strong", 0),
		map[workflow.Stage]Route{workflow.StageTwo: routeTo(t, small, "small", 300)}, nil)
	stages := []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageOne, workflow.StageTwo, workflow.StagePlan}
	var answered []string
	for _, st := range stages {
		req := prompt("x")
		req.Stage = st
		resp, err := r.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate(%s): %v", st, err)
		}
		answered = append(answered, resp.Model)
	}
	want := []string{"openai/strong", "openai/small", "openai/strong", "openai/small", "openai/strong"}
	if diff := cmp.Diff(want, answered); diff != "" {
		t.Errorf("answering models (-want +got):\n%s", diff)
	}
	if strong.hits.Load() != 3 || small.hits.Load() != 2 {
		t.Errorf("calls: strong %d, small %d; want 3 and 2", strong.hits.Load(), small.hits.Load())
	}
	if sent, _ := small.lastRequest(); sent.MaxTokens != 300 {
		t.Errorf("stage 2 max_tokens = %d, want the route's 300", sent.MaxTokens)
	}
	if diff := cmp.Diff([]string{"openai/strong", "openai/small"}, r.Models()); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
}

func TestRouterFallsBackAfterTheRetries(t *testing.T) {
	t.Parallel()
	primary := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeError(w, http.StatusInternalServerError, "overloaded")
	})
	second := newFakeOpenAI(t, answering(`{"ok":true}`))
	r := NewRouter(routeTo(t, primary, "primary", 0), nil, []Route{routeTo(t, second, "backup", 0)})
	resp, err := r.Generate(context.Background(), prompt("x"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Model != "openai/backup" || resp.Text != `{"ok":true}` {
		t.Errorf("reply = %+v, want the fallback's", resp)
	}
	if primary.hits.Load() != DefaultMaxAttempts || second.hits.Load() != 1 {
		t.Errorf("calls: primary %d, fallback %d; want %d and 1", primary.hits.Load(), second.hits.Load(), DefaultMaxAttempts)
	}
	if diff := cmp.Diff([]string{"openai/primary", "openai/backup"}, r.Models()); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
}

// A stage's temperature is sent with its calls and kept by a fallback
// without one of its own; a request's own temperature wins.
func TestRouterSendsTheStageTemperature(t *testing.T) {
	t.Parallel()
	down := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeError(w, http.StatusInternalServerError, "overloaded")
	})
	backup, plan := newFakeOpenAI(t, answering("backup")), newFakeOpenAI(t, answering("plan"))
	warm, cold, mild := 0.8, 0.1, 0.5
	stage1 := routeTo(t, down, "down", 0)
	stage1.Temperature = &warm
	planRoute := routeTo(t, plan, "plan", 0)
	planRoute.Temperature = &cold
	r := NewRouter(routeTo(t, backup, "default", 0),
		map[workflow.Stage]Route{workflow.StageOne: stage1, workflow.StagePlan: planRoute},
		[]Route{routeTo(t, backup, "backup", 0)})
	sent := func(srv *fakeOpenAI) any {
		req, _ := srv.lastRequest()
		if req.Temperature == nil {
			return nil
		}
		return *req.Temperature
	}
	for _, tc := range []struct {
		stage workflow.Stage
		temp  *float64
		srv   *fakeOpenAI
		want  any
	}{
		{workflow.StageOne, nil, backup, warm},  // failed over: the stage's
		{workflow.StagePlan, nil, plan, cold},   // the route's
		{workflow.StagePlan, &mild, plan, mild}, // the request's
	} {
		req := prompt("x")
		req.Stage, req.Temperature = tc.stage, tc.temp
		if _, err := r.Generate(context.Background(), req); err != nil {
			t.Fatalf("Generate(%s): %v", tc.stage, err)
		}
		if got := sent(tc.srv); got != tc.want {
			t.Errorf("%s call sent temperature %v, want %v", tc.stage, got, tc.want)
		}
	}
}

func TestRouterReportsEveryFailure(t *testing.T) {
	t.Parallel()
	down := func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeError(w, http.StatusServiceUnavailable, "down")
	}
	a, b := newFakeOpenAI(t, down), newFakeOpenAI(t, down)
	r := NewRouter(routeTo(t, a, "a", 0), nil, []Route{routeTo(t, b, "b", 0)})
	_, err := r.Generate(context.Background(), prompt("x"))
	if workflow.KindOf(err) != workflow.KindUnavailable {
		t.Fatalf("err = %v, want unavailable", err)
	}
	for _, name := range []string{"openai/a", "openai/b", "every model failed (2 tried)"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %q", err, name)
		}
	}
}

func TestRouterDoesNotFallBackWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	a := newFakeOpenAI(t, func(_ int, r *http.Request, _ chatRequest, _ http.ResponseWriter) {
		cancel()
		blockUntilGone(r, 5*time.Second)
	})
	b := newFakeOpenAI(t, answering("late"))
	r := NewRouter(routeTo(t, a, "a", 0), nil, []Route{routeTo(t, b, "b", 0)})
	if _, err := r.Generate(ctx, prompt("x")); err == nil || b.hits.Load() != 0 {
		t.Errorf("err = %v, fallback calls = %d; want a cancelled call and no fallback", err, b.hits.Load())
	}
}

// A route's output mode (YAML models.<stage>.outputMode) applies to its
// stage's calls; the other stages keep their model's default.
func TestRouterAppliesTheRouteOutputMode(t *testing.T) {
	t.Parallel()
	strong, small := newFakeOpenAI(t, answering(`{"action":"x"}`)), newFakeOpenAI(t, answering(`{"action":"x"}`))
	stage2 := routeTo(t, small, "small", 0)
	stage2.OutputMode = workflow.OutputJSONSchema
	r := NewRouter(routeTo(t, strong, "strong", 0), map[workflow.Stage]Route{workflow.StageTwo: stage2}, nil)
	for _, st := range []workflow.Stage{workflow.StageOne, workflow.StageTwo} {
		req := prompt("x")
		req.Stage, req.JSON, req.Output = st, true, strictSchema
		resp, err := r.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[workflow.Stage]workflow.OutputMode{workflow.StageOne: workflow.OutputTool, workflow.StageTwo: workflow.OutputJSONSchema}[st]
		if resp.OutputMode != want {
			t.Errorf("%s: mode %q, want %q", st, resp.OutputMode, want)
		}
	}
	if sent, _ := small.lastRequest(); sent.ResponseFormat == nil || sent.ResponseFormat.Type != "json_schema" {
		t.Errorf("stage 2 response_format = %+v, want json_schema", sent.ResponseFormat)
	}
	if sent, _ := strong.lastRequest(); sent.ResponseFormat != nil {
		t.Errorf("stage 1 response_format = %+v, want none (a forced tool)", sent.ResponseFormat)
	}
}

// modelFunc is a workflow.Model answering with its function.
type modelFunc func(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error)

func (f modelFunc) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	return f(ctx, req)
}

// The cache key and prefix reach the stage's model and its fallback as
// the engine set them, and the cached tokens come back unchanged.
func TestRouterPassesTheCacheFieldsThrough(t *testing.T) {
	t.Parallel()
	var got []workflow.ModelRequest
	failing := modelFunc(func(_ context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		got = append(got, req)
		return workflow.ModelResponse{}, workflow.Errorf(workflow.KindUnavailable, "overloaded")
	})
	answering := modelFunc(func(_ context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		got = append(got, req)
		return workflow.ModelResponse{Text: "ok", PromptTokens: 2050, CachedTokens: 1800, CacheWriteTokens: 200}, nil
	})
	r := NewRouter(Route{Name: "a/default", Model: answering},
		map[workflow.Stage]Route{workflow.StageTwo: {Name: "a/small", Model: failing}},
		[]Route{{Name: "a/backup", Model: answering}})
	req := prompt("x")
	req.Stage, req.CacheKey, req.CachePrefix = workflow.StageTwo, "wf_1:stage2", 1
	resp, err := r.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d calls, want the stage's and the fallback's", len(got))
	}
	for i, g := range got {
		if g.CacheKey != req.CacheKey || g.CachePrefix != req.CachePrefix {
			t.Errorf("call %d: cache key %q prefix %d, want %q %d", i, g.CacheKey, g.CachePrefix, req.CacheKey, req.CachePrefix)
		}
	}
	if resp.CachedTokens != 1800 || resp.CacheWriteTokens != 200 || resp.PromptTokens != 2050 || resp.Model != "a/backup" {
		t.Errorf("reply %+v, want the fallback's usage unchanged", resp)
	}
}
