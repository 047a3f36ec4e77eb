package wiring

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// modelServer is an OpenAI-compatible server that counts calls per model
// and answers by model: "strong" is down (500), "backup" answers Stage 1,
// "small" answers Stage 2.
type modelServer struct {
	mu    sync.Mutex
	calls map[string]int
	max   map[string]int
	// shape records how each model's last request asked for its reply:
	// "tool", a response_format type, or "".
	shape map[string]string
	// temp is the temperature of each model's last request (-1: none sent).
	temp map[string]float64
}

func (s *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		// The listing /readyz probes: "strong" is not served.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"backup"},{"id":"small"}]}`)
		return
	}
	var req struct {
		Model          string   `json:"model"`
		MaxTokens      int      `json:"max_tokens"`
		Temperature    *float64 `json:"temperature"`
		Tools          []any    `json:"tools"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.calls[req.Model]++
	s.max[req.Model] = req.MaxTokens
	switch {
	case len(req.Tools) > 0 && s.shape != nil:
		s.shape[req.Model] = "tool"
	case req.ResponseFormat != nil && s.shape != nil:
		s.shape[req.Model] = req.ResponseFormat.Type
	}
	if s.temp != nil {
		s.temp[req.Model] = -1
		if req.Temperature != nil {
			s.temp[req.Model] = *req.Temperature
		}
	}
	s.mu.Unlock()
	var content string
	switch req.Model {
	case "backup":
		content = `{"action": "workflow.complete", "actionObjective": "answer", "learnings": [], "requiredInputDocuments": [],
			"requiredConnection": null, "parametersContext": "say done", "parametersSchema": {"fields": [{"name": "message", "type": "string", "required": true}]}}`
	case "small":
		content = `{"schema": "parameters_v1", "parameters": {"message": "done"}}`
	default:
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"overloaded"}}`)
		return
	}
	body, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// The YAML models section and LLM_MODEL_STAGE2 route Stage 2 to its own
// model; Stage 1's model fails after its retries and the fallback answers;
// each request carries its stage's temperature (the fallback Stage 1's);
// the traces name the answering models and /readyz lists them all and
// reports the one its probe does not find.
func TestModelsRouteStagesAndFallBack(t *testing.T) {
	t.Parallel()
	fake := &modelServer{calls: map[string]int{}, max: map[string]int{}, shape: map[string]string{}, temp: map[string]float64{}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "models:\n  stage1: {model: strong, temperature: 0.7}\n  stage2: {model: yaml-small, maxTokens: 400, temperature: 0.2, outputMode: json_object}\n" +
		"  fallback:\n    - {provider: openai, model: backup}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_INSECURE_DEV": "1", "LLM_PROVIDER": "openai", "LLM_MODEL": "strong", "LLM_MODEL_STAGE2": "small",
		"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path,
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.closeStore()
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())
	wf, err := g.Engine.Create(ctx, engine.NewWorkflow{UserID: "dev", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %+v, %v", wf, err)
	}
	fake.mu.Lock()
	calls, maxTokens := fake.calls, fake.max["small"]
	shapes, temps := fake.shape, fake.temp
	fake.mu.Unlock()
	// Stage 1 (and its fallback) keep OpenAI's default, a forced tool, and
	// Stage 1's temperature; Stage 2 uses its YAML outputMode and temperature.
	if diff := cmp.Diff(map[string]string{"strong": "tool", "backup": "tool", "small": "json_object"}, shapes); diff != "" {
		t.Errorf("request shapes per model (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"strong": 0.7, "backup": 0.7, "small": 0.2}, temps); diff != "" {
		t.Errorf("temperature per model (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"strong": 3, "backup": 1, "small": 1}, calls); diff != "" {
		t.Errorf("calls per model (-want +got):\n%s", diff)
	}
	if maxTokens != 400 {
		t.Errorf("Stage 2 max_tokens = %d, want the YAML 400", maxTokens)
	}
	traces, err := g.Store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	var answered []string
	for _, tr := range traces {
		answered = append(answered, string(tr.Stage)+" "+tr.Model+" "+string(tr.OutputMode))
	}
	if diff := cmp.Diff([]string{"stage1 openai/backup tool", "stage2 openai/small json_object"}, answered); diff != "" {
		t.Errorf("trace models (-want +got):\n%s", diff)
	}
	rec := httptest.NewRecorder()
	g.API.Routes().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var health struct {
		Status string
		Checks map[string]string
		Models []string
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &health)
	if diff := cmp.Diff([]string{"openai/strong", "openai/small", "openai/backup"}, health.Models); diff != "" || rec.Code != 200 ||
		health.Status != "degraded" || health.Checks["model"] != `openai/strong: the provider does not list model "strong" (it lists 2 models)` {
		t.Errorf("/readyz %d %s: models (-want +got):\n%s", rec.Code, rec.Body, diff)
	}
	// Close closes every model Wire opened: none probes the provider again.
	if err := g.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	err = ModelCheck(g.Model)(ctx)
	for _, name := range health.Models {
		if err == nil || !strings.Contains(err.Error(), name+": the model is closed") {
			t.Errorf("probe after Close = %v, want %s closed", err, name)
		}
	}
}

func TestModelsOutputModeAndTemperatureChecked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "models:\n  stage1: {provider: anthropic, model: c, outputMode: json_schema}\n  stage2: {temperature: 3}\n" +
		"  fallback:\n    - {provider: openai, model: b, outputMode: yaml}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_INSECURE_DEV": "1", "LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a",
		"GATEWAY_CONFIG": path, "LLM_OUTPUT_MODE": "xml",
	}))
	for _, want := range []string{
		`models.stage1.outputMode: provider anthropic cannot use output mode "json_schema" (it can: tool, text)`,
		"models.stage2.temperature must be between 0 and 2",
		`models.fallback[0].outputMode: output mode "yaml" is not one of tool, json_schema, json_object, text`,
		`output mode "xml" is not one of`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig error %v lacks %q", err, want)
		}
	}
}

// An entry with neither provider nor model changes only its stage's
// settings: it keeps LLM_PROVIDER's LLM_MODEL, not the provider's default.
func TestModelsEntryWithoutModelKeepsLLMModel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte("models:\n  stage2: {outputMode: json_object}\n  plan: {provider: openai}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_INSECURE_DEV": "1", "LLM_PROVIDER": "openai", "LLM_MODEL": "gpt-strong", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path,
	}))
	if err != nil {
		t.Fatal(err)
	}
	refs := cfg.stageModels()
	if got := cfg.llmFor(refs[workflow.StageTwo]).Model; got != "gpt-strong" {
		t.Errorf("stage2 model = %q, want LLM_MODEL", got)
	}
	if got := cfg.llmFor(refs[workflow.StagePlan]).Model; got != "" {
		t.Errorf("plan model = %q, want the provider's default (an entry naming a provider picks its own model)", got)
	}
}

// A temperature outside 0..2 or a negative maxTokens stops start-up,
// naming the entry.
func TestModelSettingsAreChecked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "models:\n  compact: {model: m, temperature: 2.5}\n  fallback:\n    - {model: m, maxTokens: -1, temperature: 0}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_INSECURE_DEV": "1", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path,
	}))
	for _, want := range []string{"models.compact.temperature must be between 0 and 2, not 2.5", "models.fallback[0].maxTokens must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig error = %v, want it to say %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "fallback[0].temperature") {
		t.Errorf("temperature 0 refused: %v", err)
	}
}

// The compaction call goes to models.compact, else to Stage 1's model,
// else to the default.
func TestCompactStageRoute(t *testing.T) {
	t.Parallel()
	temp := 0.3
	s1, compact := &ModelRef{Model: "s1", Temperature: &temp}, &ModelRef{Model: "small"}
	for _, tc := range []struct {
		models FileModels
		want   *ModelRef
	}{
		{FileModels{Stage1: s1, Compact: compact}, compact},
		{FileModels{Stage1: s1}, s1},
		{FileModels{}, nil},
	} {
		cfg := Config{File: FileConfig{Models: tc.models}}
		got, ok := cfg.stageModels()[workflow.StageCompact]
		switch {
		case tc.want == nil && ok:
			t.Errorf("compact routed to %+v with no stage models", got)
		case tc.want != nil && (!ok || got.Model != tc.want.Model || got.Temperature != tc.want.Temperature):
			t.Errorf("compact routed to %+v (%v), want %+v", got, ok, *tc.want)
		}
	}
}
