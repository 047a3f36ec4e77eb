package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/qualify/qualifytest"
	"github.com/twostep/twostep/workflow"
)

// runQualify runs `gateway qualify args` against a fake model server at
// url and returns stdout, stderr and the exit code.
func runQualify(t *testing.T, url string, args ...string) (string, string, int) {
	t.Helper()
	return runQualifyEnv(t, url, nil, args...)
}

// runQualifyEnv is runQualify with more environment. REDIS_URL names a
// port nobody listens on: a run that opened a store would fail.
func runQualifyEnv(t *testing.T, url string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayBin, append([]string{"qualify"}, args...)...)
	cmd.Env = append(binEnv("LLM_PROVIDER=openai", "OPENAI_API_KEY="+gwAPIKey, "LLM_MODEL=fake-model", "OPENAI_BASE_URL="+url,
		"REDIS_URL=redis://127.0.0.1:9/0"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("gateway qualify %v: %v", args, err)
	}
	if strings.Contains(out.String()+errb.String(), gwAPIKey) {
		t.Errorf("gateway qualify %v printed the API key", args)
	}
	return out.String(), errb.String(), code
}

// jsonReport is the part of the --json report the tests read.
type jsonReport struct {
	Stages []struct {
		USD    *float64 `json:"usd"`
		Stage  string   `json:"stage"`
		Models []string `json:"models"`
		Cases  int      `json:"cases"`
		Passed int      `json:"passed"`
		Score  float64  `json:"score"`
		Calls  int      `json:"calls"`
		Values int      `json:"values"`
	} `json:"stages"`
	Cases []struct {
		ID        string          `json:"id"`
		Selection json.RawMessage `json:"selection"`
	} `json:"cases"`
}

// TestQualifyCommand: the built binary runs the embedded suite against
// an OpenAI-compatible server; a perfect model scores 100 % in text and
// JSON and exits 0 with --min-score 1; a model that invents values exits
// 1 below --min-score with the failures counted.
func TestQualifyCommand(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := len(s.Stage(workflow.StageOne)), len(s.Stage(workflow.StageTwo))
	perfect := qualifytest.New(t, s, qualifytest.Perfect)

	out, errOut, code := runQualify(t, perfect.URL)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Stage 1: 47 cases, openai/fake-model", "Stage 2: 42 cases, openai/fake-model",
		"passed (score)", "100.0 %", `replies with "parameters"`, "values equal to the expected", "tokens in / cached / out"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "failed:") {
		t.Errorf("a perfect model has failures:\n%s", out)
	}

	out, errOut, code = runQualify(t, perfect.URL, "--json", "--min-score", "1")
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(r.Stages) != 2 || r.Stages[0].Cases != n1 || r.Stages[1].Cases != n2 || r.Stages[0].Score != 1 || r.Stages[1].Score != 1 {
		t.Errorf("--json stages: %+v", r.Stages)
	}

	invent := qualifytest.New(t, s, qualifytest.InventedValue)
	out, errOut, code = runQualify(t, invent.URL, "--json", "--stage", "stage2", "--min-score", "0.9")
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 {
		t.Fatalf("below --min-score: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	invented := 0
	for _, c := range s.Stage(workflow.StageTwo) {
		if _, _, ok := qualifytest.Mutation(c, qualifytest.InventedValue); ok {
			invented++
		}
	}
	if len(r.Stages) != 1 || r.Stages[0].Stage != "stage2" || r.Stages[0].Passed != n2-invented || r.Stages[0].Values != n2-invented {
		t.Errorf("stage2 with invented values: %+v (want %d passed)", r.Stages, n2-invented)
	}
	if !strings.Contains(errOut, "below --min-score 0.9") {
		t.Errorf("stderr does not say why it failed: %q", errOut)
	}
}

// TestQualifyUsageErrors: a refused command line exits 2 and calls no
// model; an unreachable model exits 1.
func TestQualifyUsageErrors(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	fake := qualifytest.New(t, s, qualifytest.Perfect)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id":"x","stage":"stage1","catalogue":"support","expect":{"action":"nope.nothing"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--min-score", "2"}, {"--stage1", "gpt-4o"}, {"--stage", "stage3"}, {"--max-calls", "-1"},
		{"--cases", filepath.Join(t.TempDir(), "missing.jsonl")}, {"--cases", bad}, {"extra"},
	} {
		_, errOut, code := runQualify(t, fake.URL, args...)
		if code != 2 || !strings.Contains(errOut, "qualify:") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errOut)
		}
	}
	if n := len(fake.Prompts); n != 0 {
		t.Errorf("usage errors made %d model calls", n)
	}
	// A model that answers nothing fails the run (exit 1) after a few calls.
	out, errOut, code := runQualify(t, "http://127.0.0.1:9/v1", "--stage", "stage2")
	if code != 1 || !strings.Contains(errOut, "the model answered no call") || !strings.Contains(out, "not run / stopped / model errors") {
		t.Errorf("an unreachable model: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestQualifyCasesRedacted: a cases file is run instead of the suite, and
// a secret of the configuration that a reply carries is printed redacted.
func TestQualifyCasesRedacted(t *testing.T) {
	t.Parallel()
	line := `{"id":"leak","stage":"stage1","situation":"a secret in the request","catalogue":"support",` +
		`"messages":[{"role":"user","text":"Search the knowledge base for ` + gwAPIKey + `"}],` +
		`"expect":{"action":"kb.search","fields":["query"],"carries":["` + gwAPIKey + `"]}}`
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := qualify.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fake := qualifytest.New(t, s, qualifytest.Perfect)
	out, errOut, code := runQualify(t, fake.URL, "--cases", path, "--json")
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(r.Stages) != 1 || r.Stages[0].Cases != 1 || r.Stages[0].Passed != 1 {
		t.Errorf("stages %+v", r.Stages)
	}
	if len(r.Cases) != 1 || !strings.Contains(string(r.Cases[0].Selection), "[REDACTED]") {
		t.Errorf("the selection carrying the key is not redacted: %s", out)
	}
}

// TestQualifyModelsRouting: the models: routing of GATEWAY_CONFIG picks
// each stage's model, --stage2 overrides it, and prices: prices the calls
// of a model it lists.
func TestQualifyModelsRouting(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	fake := qualifytest.New(t, s, qualifytest.Perfect)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "models:\n  stage2: {provider: openai, model: small-model, temperature: 0}\n" +
		"prices:\n  openai/small-model: {input: 0.1, cachedInput: 0.025, output: 0.4}\n"
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GATEWAY_CONFIG=" + config}
	for _, tc := range []struct {
		args   []string
		stage2 string
		priced bool
	}{
		{nil, "openai/small-model", true},
		{[]string{"--stage2", "openai/tiny-model"}, "openai/tiny-model", false},
	} {
		out, errOut, code := runQualifyEnv(t, fake.URL, env, append([]string{"--json"}, tc.args...)...)
		var r jsonReport
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Stages) != 2 {
			t.Fatalf("%v: exit %d, %v\n%s\n%s", tc.args, code, err, out, errOut)
		}
		one, two := r.Stages[0], r.Stages[1]
		if len(one.Models) != 1 || one.Models[0] != "openai/fake-model" || len(two.Models) != 1 || two.Models[0] != tc.stage2 {
			t.Errorf("%v: models %v and %v, want openai/fake-model and %s", tc.args, one.Models, two.Models, tc.stage2)
		}
		if one.USD != nil || (two.USD != nil) != tc.priced {
			t.Errorf("%v: usd %v and %v", tc.args, one.USD, two.USD)
		}
	}
}
