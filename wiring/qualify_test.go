package wiring

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestParseModelRef: provider/model, the model may hold slashes; anything
// else is refused as the caller's error.
func TestParseModelRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in       string
		provider string
		model    string
	}{
		{"openai/gpt-4.1-nano", "openai", "gpt-4.1-nano"},
		{" Ollama/qwen2.5:3b ", "ollama", "qwen2.5:3b"},
		{"openai/meta-llama/llama-3.1-8b", "openai", "meta-llama/llama-3.1-8b"},
		{"gpt-4o", "", ""}, {"/gpt-4o", "", ""}, {"openai/", "", ""},
	} {
		ref, err := ParseModelRef(tc.in)
		if tc.provider == "" {
			if workflow.KindOf(err) != workflow.KindInvalid {
				t.Errorf("%q: err %v, want KindInvalid", tc.in, err)
			}
			continue
		}
		if err != nil || ref.Provider != tc.provider || ref.Model != tc.model {
			t.Errorf("%q: %+v, %v", tc.in, ref, err)
		}
	}
}

// TestQualifyOffline: with LLM_PROVIDER=scripted the run needs no
// provider and no store; one stage is run and printed as JSON; a bad
// model name is the request's error, before any call.
func TestQualifyOffline(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LLM_PROVIDER": "scripted"}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report, err := Qualify(context.Background(), cfg, QualifyRequest{Stage: workflow.StageTwo, Concurrency: 2, JSON: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Stages) != 1 || report.Stages[0].Stage != workflow.StageTwo || report.Stages[0].Calls == 0 {
		t.Fatalf("stages %+v", report.Stages)
	}
	var printed struct {
		Stages []struct{ Cases int } `json:"stages"`
	}
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil || len(printed.Stages) != 1 || printed.Stages[0].Cases != report.Stages[0].Cases {
		t.Errorf("printed %v: %s", err, out.String())
	}
	_, err = Qualify(context.Background(), cfg, QualifyRequest{Stage2: "nano", Concurrency: 1}, &out)
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "--stage2") {
		t.Errorf("a bad --stage2: %v", err)
	}
}

// TestQualifyModelNotBuilt: a stage model that cannot be built (a
// provider without its key) is an error, not a panic, and the models
// opened before it are closed.
func TestQualifyModelNotBuilt(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-test-not-used", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = Qualify(context.Background(), cfg, QualifyRequest{Stage2: "anthropic/claude-haiku-4-5", Concurrency: 1}, &out)
	if err == nil || !strings.Contains(err.Error(), "anthropic") {
		t.Errorf("err %v, want the anthropic model's", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}
