package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A server that cannot stream answers a streamed request with its whole
// reply (detected, never configured: DESIGN §11.2). The tap turns that
// reply into the event stream the provider client parses, so the call
// costs no second request and the reply, its usage and its finish reason
// are read as from any stream.

// wholePiece bounds the text of one made-up event: the clients read a
// stream line by line with a 64 KiB line limit, and JSON may escape a
// byte as six.
const wholePiece = 8 << 10

// asEvents returns the event stream equivalent to a whole JSON reply, and
// false when raw is not one.
func (t *streamTap) asEvents(raw []byte) ([]byte, bool) {
	if t.anthropic {
		return anthropicEvents(raw)
	}
	return openAIEvents(raw)
}

// events writes SSE data lines.
type events struct{ bytes.Buffer }

func (e *events) data(v any) {
	b, _ := json.Marshal(v)
	e.WriteString("data: ")
	e.Write(b)
	e.WriteString("\n\n")
}

// openAIEvents turns a chat.completion into chat.completion.chunk events.
func openAIEvents(raw []byte) ([]byte, bool) {
	var resp struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(raw, &resp) != nil || len(resp.Choices) == 0 {
		return nil, false
	}
	var e events
	chunk := func(delta map[string]any, finish any) {
		e.data(map[string]any{"id": resp.ID, "object": "chat.completion.chunk", "model": resp.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	c := resp.Choices[0]
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range splitText(c.Message.Content) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, tc := range c.Message.ToolCalls {
		chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": tc.ID, "type": tc.Type,
			"function": map[string]any{"name": tc.Function.Name, "arguments": ""}}}}, nil)
		for _, p := range splitText(tc.Function.Arguments) {
			chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, c.FinishReason)
	if len(resp.Usage) > 0 && string(resp.Usage) != "null" {
		e.data(map[string]any{"id": resp.ID, "object": "chat.completion.chunk", "choices": []any{}, "usage": resp.Usage})
	}
	e.WriteString("data: [DONE]\n\n")
	return e.Bytes(), true
}

// anthropicEvents turns a Messages API message into its stream's events.
func anthropicEvents(raw []byte) ([]byte, bool) {
	var msg struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage map[string]any `json:"usage"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Type != "message" || msg.Usage == nil {
		return nil, false
	}
	var e events
	e.data(map[string]any{"type": "message_start", "message": map[string]any{
		"id": msg.ID, "type": "message", "role": msg.Role, "model": msg.Model, "usage": msg.Usage}})
	index := 0
	for _, b := range msg.Content {
		var deltas []map[string]any
		switch b.Type {
		case "text":
			e.data(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range splitText(b.Text) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
		case "tool_use":
			e.data(map[string]any{"type": "content_block_start", "index": index,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			for _, p := range splitText(string(b.Input)) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		default:
			continue // thinking and other blocks are not the reply
		}
		for _, d := range deltas {
			e.data(map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		e.data(map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	e.data(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg.StopReason}, "usage": msg.Usage})
	e.data(map[string]any{"type": "message_stop"})
	return e.Bytes(), true
}

// splitText cuts s into pieces of at most wholePiece bytes on rune
// boundaries.
func splitText(s string) []string {
	var out []string
	for len(s) > wholePiece {
		n := wholePiece
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
