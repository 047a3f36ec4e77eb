package llm

import (
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func TestTokenizerIsOfflineAndExact(t *testing.T) {
	t.Parallel()
	var tk Tokenizer
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"Hello world", 2},
		{"tiktoken is great!", 6},
		{`{"action":"workflow.complete"}`, 6}, // {" action ":" workflow .complete "}
	}
	for _, tt := range tests {
		if got := tk.Count(tt.text); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	// The tables come from the embedded assets: a load error would mean a
	// silent fallback to the rough estimate.
	if _, err := cl100k(); err != nil {
		t.Fatalf("loading the embedded cl100k tables: %v", err)
	}
}

// Usage as langchaingo v0.1.14's clients report it, in the engine's
// terms: PromptTokens counts every input token on every provider (for
// Anthropic, input_tokens plus the tokens read from and written to the
// cache), and the cached tokens are a part of it.
func TestReportedUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info map[string]any
		want usage
	}{
		{"openai and ollama ints", map[string]any{"PromptTokens": 21, "CompletionTokens": 13, "PromptCachedTokens": 0}, usage{prompt: 21, completion: 13}},
		{"openai cached", map[string]any{"PromptTokens": 2006, "CompletionTokens": 300, "PromptCachedTokens": 1920},
			usage{prompt: 2006, completion: 300, cached: 1920}},
		{"googleai int32", map[string]any{"PromptTokens": int32(11), "CompletionTokens": int32(4)}, usage{prompt: 11, completion: 4}},
		{"anthropic names", map[string]any{"InputTokens": 13, "OutputTokens": 35}, usage{prompt: 13, completion: 35}},
		{"anthropic cache read and write", map[string]any{"InputTokens": 50, "OutputTokens": 35,
			"CacheReadInputTokens": 1800, "CacheCreationInputTokens": 200}, usage{prompt: 2050, completion: 35, cached: 1800, cacheWrite: 200}},
		{"float64", map[string]any{"PromptTokens": 3.0, "CompletionTokens": 2.0}, usage{prompt: 3, completion: 2}},
		{"cached beyond the prompt is cut", map[string]any{"PromptTokens": 10, "PromptCachedTokens": 12}, usage{prompt: 10, cached: 10}},
		{"none", nil, usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := reportedUsage(&llms.ContentChoice{GenerationInfo: tt.info}); got != tt.want {
				t.Errorf("reportedUsage = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The embedded table is whole: every rank from 0 to cl100kSize-1 once, each
// for a different token (a cut or corrupted file would miscount quietly).
func TestCl100kTableIsWhole(t *testing.T) {
	t.Parallel()
	ranks, err := cl100kRanks()
	if err != nil {
		t.Fatal(err)
	}
	if len(ranks) != cl100kSize {
		t.Fatalf("%d tokens, want %d", len(ranks), cl100kSize)
	}
	seen := make([]bool, cl100kSize)
	for tok, r := range ranks {
		if r < 0 || r >= cl100kSize || seen[r] {
			t.Fatalf("token %q has rank %d: out of range or given twice", tok, r)
		}
		seen[r] = true
	}
}

func BenchmarkCl100kLoad(b *testing.B) {
	for b.Loop() {
		if _, err := cl100kRanks(); err != nil {
			b.Fatal(err)
		}
	}
}
