// Package qualifytest is a fake OpenAI-compatible chat server that answers
// each case of a qualify suite from the case's expectations, perfectly or
// with one chosen failure, so the scoring can be checked column by column
// (qualify's tests, and the end-to-end test of `gateway qualify`).
package qualifytest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/workflow"
)

// Fault is the failure the server's replies carry.
type Fault string

// The faults. Each is applied to every reply of a case unless it says
// otherwise.
const (
	// Perfect answers every case from its expectations.
	Perfect Fault = ""
	// ParametersKey adds a "parameters" key to Stage 1 replies.
	ParametersKey Fault = "parameters"
	// ParametersOnce adds it to a case's first Stage 1 reply only.
	ParametersOnce Fault = "parameters-once"
	// Forbidden adds a field named "documents" to Stage 1's
	// parametersSchema and a "documents" key to Stage 2's parameters.
	Forbidden Fault = "forbidden"
	// WrongAction chooses workflow.complete (document.generate where
	// workflow.complete is expected), with no references.
	WrongAction Fault = "wrong-action"
	// WrongValue gives, in Stage 2, half of one expected string value
	// (one whose half is still found in what Stage 2 was shown).
	WrongValue Fault = "wrong-value"
	// InventedValue gives, in Stage 2, a value found nowhere in what
	// Stage 2 was shown in place of one expected value.
	InventedValue Fault = "invented-value"
	// InvalidJSON answers prose with no JSON object.
	InvalidJSON Fault = "invalid-json"
	// Truncated answers half a reply with finish_reason "length".
	Truncated Fault = "truncated"
)

// Usage is the token usage every reply reports.
var Usage = struct{ Prompt, Cached, Completion int }{Prompt: 1000, Cached: 400, Completion: 50}

// Server is the fake. Each request names its case by its prompt cache key
// ("qualify-<id>:<stage>").
type Server struct {
	URL   string
	suite qualify.Suite
	fault Fault

	mu       sync.Mutex
	attempts map[string]int
	// Prompts are the prompts received, by cache key, for tests that read
	// what was sent.
	Prompts map[string][]string
}

// New starts the fake for suite with fault; it is closed with t.
func New(t testing.TB, suite qualify.Suite, fault Fault) *Server {
	s := &Server{suite: suite, fault: fault, attempts: map[string]int{}, Prompts: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

type request struct {
	CacheKey string `json:"prompt_cache_key"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	id, stage, _ := strings.Cut(strings.TrimPrefix(req.CacheKey, "qualify-"), ":")
	i := slices.IndexFunc(s.suite.Cases, func(c qualify.Prepared) bool { return c.ID == id && string(c.Stage) == stage })
	if i < 0 {
		http.Error(w, `{"error":{"message":"unknown case"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.attempts[req.CacheKey]++
	attempt := s.attempts[req.CacheKey]
	var prompt strings.Builder
	for _, m := range req.Messages {
		prompt.Write(m.Content)
	}
	s.Prompts[req.CacheKey] = append(s.Prompts[req.CacheKey], prompt.String())
	s.mu.Unlock()
	text, finish := Reply(s.suite.Cases[i], s.fault, attempt)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-qualify", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": finish, "message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]any{"prompt_tokens": Usage.Prompt, "completion_tokens": Usage.Completion, "total_tokens": Usage.Prompt + Usage.Completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": Usage.Cached}},
	})
}

// Reply is the text and finish reason the fake answers c's attempt with.
func Reply(c qualify.Prepared, fault Fault, attempt int) (string, string) {
	switch fault {
	case InvalidJSON:
		return "I would choose the action that reads the ticket first.", "stop"
	case Truncated:
		full, _ := Reply(c, Perfect, attempt)
		return full[:len(full)/2], "length"
	}
	var v map[string]any
	if c.Stage == workflow.StageOne {
		v = stage1(c, fault, attempt)
	} else {
		v = stage2(c, fault)
	}
	b, _ := json.Marshal(v)
	return string(b), "stop"
}

// stage1 is c's Stage 1 reply: the expected choice, with fault.
func stage1(c qualify.Prepared, fault Fault, attempt int) map[string]any {
	e := c.Expect
	fields := []any{}
	for _, f := range e.Fields {
		fields = append(fields, map[string]any{"name": f})
	}
	var conn any
	if e.Connection != "" {
		conn = e.Connection
	}
	docs := append([]string{}, e.Documents...)
	v := map[string]any{"action": e.Action, "actionObjective": "do what the user asked", "learnings": []string{},
		"requiredInputDocuments": docs, "requiredConnection": conn,
		"parametersContext": strings.Join(e.Carries, "; "), "parametersSchema": map[string]any{"fields": fields}}
	switch {
	case fault == ParametersKey, fault == ParametersOnce && attempt == 1:
		v["parameters"] = map[string]any{"note": "filled by Stage 1"}
	case fault == Forbidden:
		v["parametersSchema"] = map[string]any{"fields": append(fields, map[string]any{"name": "documents", "type": "string", "required": false})}
	case fault == WrongAction:
		v["action"], v["requiredInputDocuments"], v["requiredConnection"] = workflow.CompleteAction, []string{}, nil
		v["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message"}}}
		if e.Action == workflow.CompleteAction {
			v["action"] = "document.generate"
			v["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "fileName"}, map[string]any{"name": "content"}}}
		}
	}
	return v
}

// stage2 is c's Stage 2 reply: the expected values, with fault.
func stage2(c qualify.Prepared, fault Fault) map[string]any {
	params := maps.Clone(c.Expect.Values)
	if params == nil {
		params = map[string]any{}
	}
	switch fault {
	case Forbidden:
		params["documents"] = []string{}
	case WrongValue, InventedValue:
		if k, v, ok := Mutation(c, fault); ok {
			params[k] = v
		}
	}
	return map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params}
}

// Mutation is the parameter WrongValue or InventedValue changes in c's
// Stage 2 reply and its new value; false when the case has none to change
// (its reply is then the perfect one).
func Mutation(c qualify.Prepared, fault Fault) (string, any, bool) {
	spec, _ := c.Catalogue.Action(c.Selection.Action)
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(spec.Parameters, &schema)
	g := prompts.Stage2Grounding(*c.Selection, spec)
	for _, k := range slices.Sorted(maps.Keys(c.Expect.Values)) {
		p := schema.Properties[k]
		s, isString := c.Expect.Values[k].(string)
		if !isString || p["type"] != "string" || p["enum"] != nil {
			continue
		}
		if fault == InventedValue {
			return k, "Zqxv Invented 48213", true
		}
		r := []rune(s)
		half := string(r[:len(r)/2])
		if len(r) >= 8 && len(prompts.Ungrounded(map[string]any{k: half}, g)) == 0 {
			return k, half, true
		}
	}
	return "", nil, false
}

// String names f for test names.
func (f Fault) String() string {
	if f == Perfect {
		return "perfect"
	}
	return fmt.Sprint(string(f))
}
