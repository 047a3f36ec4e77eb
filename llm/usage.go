package llm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	"github.com/tmc/langchaingo/llms"

	"github.com/twostep/twostep/workflow"
)

// Tokenizer estimates token counts offline with the cl100k_base encoding,
// read from the table embedded in this package. It never touches the
// network: it does not use tiktoken's global loader (which downloads), nor
// langchaingo's llms.CountTokens. The table is decoded once per process, on
// first use, and shared by every Tokenizer; Tokenizer is safe for
// concurrent use and its zero value is ready.
type Tokenizer struct{}

// cl100k_base's split pattern and special tokens, as tiktoken defines them.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// cl100k is the process's one cl100k_base encoder: gunzipping the table
// and building its 100k-entry rank map costs tens of milliseconds, once.
var cl100k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	ranks, err := cl100kRanks()
	if err != nil {
		return nil, err
	}
	special := map[string]int{
		"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
		"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, special, cl100kPattern)
	if err != nil {
		return nil, err
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	enc := &tiktoken.Encoding{Name: "cl100k_base", PatStr: cl100kPattern, MergeableRanks: ranks, SpecialTokens: special}
	return tiktoken.NewTiktoken(bpe, enc, set), nil
})

// cl100kTable is OpenAI's cl100k_base.tiktoken (MIT licence, as shipped by
// tiktoken-go-loader v0.0.2, sha256 of the uncompressed file
// 223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7),
// gzipped: the one table the gateway uses, instead of the loader's four
// (6.9 MB in every binary).
//
//go:embed cl100k_base.tiktoken.gz
var cl100kTable []byte

// cl100kSize is how many tokens cl100k_base ranks (0 to cl100kSize-1).
const cl100kSize = 100256

// cl100kRanks decodes cl100kTable: one "<base64 token> <rank>" a line.
func cl100kRanks() (map[string]int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(cl100kTable))
	if err != nil {
		return nil, err
	}
	ranks := make(map[string]int, cl100kSize)
	sc := bufio.NewScanner(zr)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		token, err := base64.StdEncoding.DecodeString(string(tok))
		if err != nil || !ok {
			return nil, fmt.Errorf("cl100k table line %d: not a base64 token and a rank", n)
		}
		if ranks[string(token)], err = strconv.Atoi(string(rank)); err != nil {
			return nil, fmt.Errorf("cl100k table line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return ranks, nil
}

// Count returns the number of tokens of text. Should the embedded tables
// ever fail to load, it falls back to workflow.ApproxTokens.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	enc, err := cl100k()
	if err != nil {
		return workflow.ApproxTokens(text)
	}
	return len(enc.EncodeOrdinary(text))
}

// usage is the token usage a provider reported for one call, in the
// engine's terms: prompt counts every input token (cached, written to the
// cache, and neither), as the OpenTelemetry GenAI conventions count
// gen_ai.usage.input_tokens; cached and cacheWrite are parts of it.
type usage struct {
	prompt, completion, cached, cacheWrite int
}

// reportedUsage reads the usage a provider reported in a choice's
// GenerationInfo; langchaingo v0.1.14 names it per client:
//   - openai (OpenAI, OpenAI-compatible servers, Gemini's and Ollama's
//     OpenAI-compatible endpoints): PromptTokens, CompletionTokens and
//     PromptCachedTokens (usage.prompt_tokens_details.cached_tokens, which
//     Gemini's endpoint fills from its cachedContentTokenCount), cached
//     tokens being part of the prompt tokens;
//   - anthropic: InputTokens, OutputTokens, CacheReadInputTokens and
//     CacheCreationInputTokens. Anthropic's input_tokens counts only the
//     tokens after the last cache breakpoint, so the prompt is the sum of
//     the three.
//
// A count not reported is 0; cached and cacheWrite never exceed prompt.
func reportedUsage(c *llms.ContentChoice) usage {
	if c == nil {
		return usage{}
	}
	info := c.GenerationInfo
	u := usage{
		prompt:     firstInt(info, "PromptTokens", "InputTokens"),
		completion: firstInt(info, "CompletionTokens", "OutputTokens"),
		cached:     firstInt(info, "PromptCachedTokens", "CacheReadInputTokens"),
		cacheWrite: firstInt(info, "CacheCreationInputTokens"),
	}
	if _, anthropic := info["InputTokens"]; anthropic {
		u.prompt += u.cached + u.cacheWrite
	}
	u.cached = min(max(u.cached, 0), u.prompt)
	u.cacheWrite = min(max(u.cacheWrite, 0), u.prompt-u.cached)
	return u
}

func firstInt(info map[string]any, keys ...string) int {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v
		case int32:
			return int(v)
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
	}
	return 0
}
