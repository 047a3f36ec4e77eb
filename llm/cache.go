package llm

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twostep/twostep/workflow"
)

// How a request asks the provider to cache its stable prefix (DESIGN
// §10.1, docs/stage2-small-model.md). langchaingo v0.1.14 can express
// neither marker the adapter needs, so the transport adds them to the
// request body (bodyPatch):
//   - OpenAI and OpenAI-compatible servers (provider openai): a top-level
//     prompt_cache_key = ModelRequest.CacheKey, which routes requests that
//     share a prefix to the same cache; langchaingo's request struct has
//     no such field;
//   - Anthropic: cache_control {"type":"ephemeral"} on the last content
//     block of the message ModelRequest.CachePrefix-1 (the system prompt
//     when that message is a system one, sent as a block array since a
//     string cannot carry the marker), and a second on that of message
//     ModelRequest.CacheSealed-1 when it is further (Stage 1's documents
//     index, DESIGN §11.1; providers allow four marks). langchaingo's anthropic client
//     keeps cache_control only on human text parts and flattens the
//     system prompt into a string, so one rewrite serves every case;
//   - Gemini and Ollama: nothing. Gemini caches implicitly (and its
//     OpenAI-compatible endpoint documents no prompt_cache_key); Ollama
//     reuses its own KV cache for a shared prefix.
//
// A provider that refuses a request carrying a marker with HTTP 400 gets
// the call once more without it (Model.Generate).

// ephemeral is Anthropic's cache marker (the default five-minute cache).
var ephemeral = json.RawMessage(`{"type":"ephemeral"}`)

// cacheMarks is what one call carries to have its stable prefix cached.
// The zero value carries nothing.
type cacheMarks struct {
	// key is the OpenAI-compatible prompt_cache_key ("" sends none).
	key string
	// breakpoint is where Anthropic's cache_control goes (nil: nowhere);
	// sealed is where its second one goes (nil: nowhere).
	breakpoint, sealed *cacheBreakpoint
}

func (c cacheMarks) empty() bool { return c.key == "" && c.breakpoint == nil && c.sealed == nil }

// planCache returns the markers req asks of m's provider.
func (m *Model) planCache(req workflow.ModelRequest) cacheMarks {
	switch m.provider {
	case ProviderOpenAI:
		return cacheMarks{key: req.CacheKey}
	case ProviderAnthropic:
		marks := cacheMarks{breakpoint: anthropicBreakpoint(req.Messages, req.CachePrefix)}
		if req.CacheSealed > req.CachePrefix && req.CacheSealed <= len(req.Messages) {
			marks.sealed = anthropicBreakpoint(req.Messages, req.CacheSealed)
		}
		return marks
	}
	return cacheMarks{}
}

// cacheBreakpoint names the Anthropic content whose last block gets
// cache_control: the system prompt, or messages[message] of the request
// body (the engine's messages without the system ones, which Anthropic
// takes apart).
type cacheBreakpoint struct {
	system  bool
	message int
}

// anthropicBreakpoint places the marker on the last of the prefix leading
// messages (all of them when prefix exceeds their number); nil when prefix
// is 0 or less.
func anthropicBreakpoint(msgs []workflow.PromptMessage, prefix int) *cacheBreakpoint {
	if prefix <= 0 || len(msgs) == 0 {
		return nil
	}
	last := min(prefix, len(msgs)) - 1
	if msgs[last].Role == workflow.PromptSystem {
		return &cacheBreakpoint{system: true}
	}
	n := 0
	for _, m := range msgs[:last] {
		if m.Role != workflow.PromptSystem {
			n++
		}
	}
	return &cacheBreakpoint{message: n}
}

// apply sets cache_control on the breakpoint's last content block in an
// Anthropic Messages request body. On an error the body is unchanged.
func (b cacheBreakpoint) apply(body map[string]json.RawMessage) error {
	if b.system {
		raw, ok := body["system"]
		if !ok {
			return errors.New("the request has no system prompt to mark")
		}
		marked, err := markLastBlock(raw)
		if err != nil {
			return fmt.Errorf("system: %w", err)
		}
		body["system"] = marked
		return nil
	}
	// Only the marked message is decoded; the others are kept as sent.
	var msgs []json.RawMessage
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	if b.message >= len(msgs) {
		return fmt.Errorf("message %d is beyond the request's %d", b.message, len(msgs))
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(msgs[b.message], &msg); err != nil || msg == nil {
		return fmt.Errorf("message %d is not an object", b.message)
	}
	marked, err := markLastBlock(msg["content"])
	if err != nil {
		return fmt.Errorf("message %d: %w", b.message, err)
	}
	msg["content"] = marked
	if msgs[b.message], err = json.Marshal(msg); err != nil {
		return fmt.Errorf("message %d: %w", b.message, err)
	}
	joined := append(make([]byte, 0, len(body["messages"])+64), '[')
	for i, m := range msgs {
		if i > 0 {
			joined = append(joined, ',')
		}
		joined = append(joined, m...)
	}
	body["messages"] = append(joined, ']')
	return nil
}

// markLastBlock returns content (a string, or an array of content blocks)
// as an array of blocks whose last carries cache_control.
func markLastBlock(content json.RawMessage) (json.RawMessage, error) {
	var blocks []map[string]json.RawMessage
	var text string
	if err := json.Unmarshal(content, &text); err == nil {
		if text == "" {
			return nil, errors.New("the content is empty")
		}
		blocks = []map[string]json.RawMessage{{"type": json.RawMessage(`"text"`), "text": content}}
	} else if err := json.Unmarshal(content, &blocks); err != nil || len(blocks) == 0 || blocks[len(blocks)-1] == nil {
		return nil, errors.New("the content is neither text nor content blocks")
	}
	blocks[len(blocks)-1]["cache_control"] = ephemeral
	return json.Marshal(blocks)
}
