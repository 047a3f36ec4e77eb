package economy

import (
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// PlainSystemPrompt is the system message the plain loop sends: the short
// instruction an agent framework's tool-calling loop starts with.
const PlainSystemPrompt = "You are a helpful assistant. Use the tools to carry out the user's request, " +
	"one tool call at a time; when it is done, answer the user."

// PlainCall is one model call of the plain tool-calling loop: the call the
// loop would make at a step that ran an action (its reply a tool call) or
// answered (its reply the answer).
type PlainCall struct {
	Round, Step int
	// Request is everything the call sends, in the order a provider reads
	// it: the tools, the system message, then the transcript.
	Request string
	// Tokens is Request's tokens, counted part by part as the transcript
	// grew (the Input of the call's usage).
	Tokens int
	// Output is the reply the model writes: the tool call as JSON, or the
	// answer.
	Output string
}

// PlainInput is what PlainLoop reads.
type PlainInput struct {
	// Actions are the tools the loop offers (workflow.complete is left out:
	// the loop ends by answering).
	Actions []workflow.ActionSpec
	// Messages are the workflow's messages in order.
	Messages []workflow.Message
	// Count counts a text's tokens.
	Count func(string) int
	// DocumentText returns a document's text ("" when it has none).
	DocumentText func(workflow.Document) string
}

// PlainLoop returns the calls the plain tool-calling loop every agent
// framework ships would make for the same steps: one call per step, the
// actions as native tools, and an append-only transcript: each round's user
// message (its prompt, and the names of its uploads), each action step as
// the assistant's tool call followed by the tool's result — the action's
// text and the text of every document it produced — and each answer. A
// step whose action message is there is a call replying with the tool
// call; an assistant message is a call replying with the answer. Summary
// messages (history compaction) are not part of the loop's transcript.
func PlainLoop(in PlainInput) []PlainCall {
	var b strings.Builder
	b.WriteString(plainTools(in.Actions))
	b.WriteString("\nsystem: ")
	b.WriteString(PlainSystemPrompt)
	tokens := in.Count(b.String())
	add := func(part string) {
		b.WriteString(part)
		tokens += in.Count(part)
	}
	var calls []PlainCall
	for _, m := range in.Messages {
		switch m.Role {
		case workflow.RoleUser:
			add("\nuser: " + userText(m))
		case workflow.RoleAction:
			call := toolCall(m)
			calls = append(calls, PlainCall{Round: m.Round, Step: m.Step, Request: b.String(), Tokens: tokens, Output: call})
			add("\nassistant: " + call + "\ntool: " + toolResult(m, in.DocumentText))
		case workflow.RoleAssistant:
			calls = append(calls, PlainCall{Round: m.Round, Step: m.Step, Request: b.String(), Tokens: tokens, Output: m.Text})
			add("\nassistant: " + m.Text)
		}
	}
	return calls
}

// plainTools is the tools list as an OpenAI-compatible request sends it.
func plainTools(specs []workflow.ActionSpec) string {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	tools := []tool{}
	for _, s := range specs {
		if s.Name == workflow.CompleteAction {
			continue
		}
		params := s.Parameters
		if !json.Valid(params) {
			params = json.RawMessage(`{"type":"object"}`)
		}
		tools = append(tools, tool{Type: "function", Function: function{Name: s.Name, Description: s.Description, Parameters: params}})
	}
	out, _ := json.Marshal(tools) // raw parameters checked valid above
	return "tools: " + string(out)
}

// userText is a user message as the loop's transcript shows it.
func userText(m workflow.Message) string {
	if len(m.Documents) == 0 {
		return m.Text
	}
	names := make([]string, len(m.Documents))
	for i, d := range m.Documents {
		names[i] = d.Name + " (" + d.ID + ")"
	}
	return m.Text + "\nAttached: " + strings.Join(names, ", ")
}

// toolCall is an action step's tool call as the model writes it.
func toolCall(m workflow.Message) string {
	params := m.Parameters
	if params == nil {
		params = map[string]any{}
	}
	out, err := json.Marshal(struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}{m.Action, params})
	if err != nil {
		return `{"name":` + quote(m.Action) + `,"arguments":{}}`
	}
	return string(out)
}

// toolResult is the tool message of an action step: the action's text and
// the text of each document it produced.
func toolResult(m workflow.Message, docText func(workflow.Document) string) string {
	var b strings.Builder
	b.WriteString(m.Text)
	for _, d := range m.Documents {
		if docText == nil {
			continue
		}
		if t := docText(d); t != "" {
			b.WriteString("\n\n")
			b.WriteString(t)
		}
	}
	return b.String()
}

// quote is s as a JSON string.
func quote(s string) string {
	out, _ := json.Marshal(s) // a string always encodes
	return string(out)
}
