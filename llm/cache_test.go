package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// wireServer is a fake provider that records every raw request body and
// answers with reply(n, body), n counting requests from 0.
type wireServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	raws  [][]byte
	reply func(n int, body map[string]json.RawMessage, w http.ResponseWriter)
}

func newWireServer(t *testing.T, path string, reply func(n int, body map[string]json.RawMessage, w http.ResponseWriter)) *wireServer {
	t.Helper()
	s := &wireServer{reply: reply}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.raws)
		s.raws = append(s.raws, raw)
		s.mu.Unlock()
		s.reply(n, body, w)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *wireServer) bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raws...)
}

// openAICachedReply answers as OpenAI documents a partly cached prompt.
func openAICachedReply(_ int, _ map[string]json.RawMessage, w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",`+
		`"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,`+
		`"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`)
}

// OpenAI-compatible requests carry prompt_cache_key = CacheKey on
// provider openai only (Gemini caches implicitly and documents no such
// member; Ollama has no provider cache), and never without a CacheKey.
// The cached tokens of usage.prompt_tokens_details are read on every
// provider of that family: Gemini's endpoint reports its
// cachedContentTokenCount there.
func TestPromptCacheKeyWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider string
		key      string
		wantKey  string // "" when none may be sent
	}{
		{ProviderOpenAI, "wf_01J9:stage1", `"wf_01J9:stage1"`},
		{ProviderOpenAI, "", ""},
		{ProviderGoogleAI, "wf_01J9:stage1", ""},
		{ProviderOllama, "wf_01J9:stage1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.key, func(t *testing.T) {
			t.Parallel()
			path := map[string]string{ProviderOpenAI: "/v1/chat/completions", ProviderGoogleAI: "/v1beta/openai/chat/completions",
				ProviderOllama: "/v1/chat/completions"}[tt.provider]
			srv := newWireServer(t, path, openAICachedReply)
			cfg := Config{Provider: tt.provider, Model: "m", OpenAIBaseURL: srv.srv.URL + "/v1", GoogleAPIKey: "google-test-key",
				GeminiBaseURL: srv.srv.URL + "/v1beta/openai", OllamaBaseURL: srv.srv.URL, MaxAttempts: 1}
			m, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			req := prompt("hi")
			req.CacheKey, req.CachePrefix = tt.key, 1
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			bodies := srv.bodies()
			if len(bodies) != 1 {
				t.Fatalf("%d requests, want 1", len(bodies))
			}
			var body map[string]json.RawMessage
			_ = json.Unmarshal(bodies[0], &body)
			if got := string(body["prompt_cache_key"]); got != tt.wantKey {
				t.Errorf("prompt_cache_key = %s, want %q", got, tt.wantKey)
			}
			if strings.Contains(string(bodies[0]), "cache_control") {
				t.Errorf("an OpenAI-compatible request carries cache_control: %s", bodies[0])
			}
			if resp.PromptTokens != 2006 || resp.CachedTokens != 1920 || resp.CacheWriteTokens != 0 || resp.CompletionTokens != 300 {
				t.Errorf("usage %d in (%d cached, %d written) / %d out, want 2006 (1920, 0) / 300",
					resp.PromptTokens, resp.CachedTokens, resp.CacheWriteTokens, resp.CompletionTokens)
			}
		})
	}
}

// anthropicCachedReply answers as Anthropic documents a request that read
// 1,800 tokens from the cache and wrote 200: input_tokens counts only the
// 50 after the breakpoint.
func anthropicCachedReply(_ int, _ map[string]json.RawMessage, w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],`+
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":50,"cache_creation_input_tokens":200,`+
		`"cache_read_input_tokens":1800,"output_tokens":35}}`)
}

// Anthropic requests carry cache_control on the last content block of the
// message CachePrefix-1 (the system prompt, as a block array, when that
// message is a system one), exactly once, and nowhere without a
// CachePrefix; the usage sums input, cache read and cache write tokens
// into PromptTokens.
func TestAnthropicCacheControlWire(t *testing.T) {
	t.Parallel()
	const (
		plainSystem = `"rules"`
		markedSys   = `[{"type":"text","text":"rules","cache_control":{"type":"ephemeral"}}]`
	)
	stage1 := []workflow.PromptMessage{
		{Role: "system", Content: "rules"}, {Role: "user", Content: "catalogue"},
		{Role: "assistant", Content: "step 1"}, {Role: "user", Content: "history"},
	}
	text := func(role, s string, marked bool) string {
		cc := ""
		if marked {
			cc = `,"cache_control":{"type":"ephemeral"}`
		}
		return `{"role":"` + role + `","content":[{"type":"text","text":"` + s + `"` + cc + `}]}`
	}
	messages := func(marked ...int) string {
		return "[" + text("user", "catalogue", slices.Contains(marked, 0)) + "," + text("assistant", "step 1", slices.Contains(marked, 1)) + "," +
			text("user", "history", slices.Contains(marked, 2)) + "]"
	}
	tests := []struct {
		name           string
		msgs           []workflow.PromptMessage
		prefix, sealed int
		output         bool
		wantSystem     string
		wantMessages   string
		wantMarks      int
	}{
		{"no prefix marks nothing", stage1, 0, 0, false, plainSystem, messages(-1), 0},
		{"prefix 1 marks the system block", stage1[:2], 1, 0, false, markedSys, "[" + text("user", "catalogue", false) + "]", 1},
		{"prefix 2 marks the first user message", stage1, 2, 0, false, plainSystem, messages(0), 1},
		{"prefix 3 marks an assistant message", stage1, 3, 0, false, plainSystem, messages(1), 1},
		{"a prefix beyond the prompt marks its last message", stage1, 9, 0, false, plainSystem, messages(2), 1},
		{"with a forced tool", stage1, 2, 0, true, plainSystem, messages(0), 1},
		{"a sealed prefix puts a second mark after the first", stage1, 2, 4, false, plainSystem, messages(0, 2), 2},
		{"a second mark on the system prompt and a message", stage1, 1, 3, false, markedSys, messages(1), 2},
		{"a sealed prefix not beyond the first marks once", stage1, 2, 2, false, plainSystem, messages(0), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newWireServer(t, "/v1/messages", func(n int, body map[string]json.RawMessage, w http.ResponseWriter) {
				if !tt.output {
					anthropicCachedReply(n, body, w)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[`+
					`{"type":"tool_use","id":"t1","name":"reply_v1","input":{"ok":true}}],"stop_reason":"tool_use",`+
					`"usage":{"input_tokens":50,"cache_creation_input_tokens":200,"cache_read_input_tokens":1800,"output_tokens":35}}`)
			})
			m, err := New(context.Background(), Config{Provider: ProviderAnthropic, Model: "claude-test", AnthropicAPIKey: "k",
				AnthropicBaseURL: srv.srv.URL + "/v1", MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			req := workflow.ModelRequest{Messages: tt.msgs, Stage: workflow.StageOne, CachePrefix: tt.prefix, CacheSealed: tt.sealed, CacheKey: "wf_1:stage1"}
			if tt.output {
				req.Output = &workflow.OutputSchema{Name: "reply_v1", Schema: json.RawMessage(`{"type":"object"}`)}
			}
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			raw := srv.bodies()[0]
			var body map[string]json.RawMessage
			_ = json.Unmarshal(raw, &body)
			sameWire(t, "system", body["system"], tt.wantSystem)
			sameWire(t, "messages", body["messages"], tt.wantMessages)
			if got := strings.Count(string(raw), "cache_control"); got != tt.wantMarks {
				t.Errorf("cache_control appears %d times, want %d: %s", got, tt.wantMarks, raw)
			}
			if _, ok := body["prompt_cache_key"]; ok {
				t.Errorf("Anthropic request carries prompt_cache_key")
			}
			if tt.output && (body["tool_choice"] == nil || resp.Text != `{"ok":true}`) {
				t.Errorf("tool_choice %s, reply %q: the output patch and the cache marker must both hold", body["tool_choice"], resp.Text)
			}
			if resp.PromptTokens != 2050 || resp.CachedTokens != 1800 || resp.CacheWriteTokens != 200 || resp.CompletionTokens != 35 {
				t.Errorf("usage %d in (%d cached, %d written) / %d out, want 2050 (1800, 200) / 35",
					resp.PromptTokens, resp.CachedTokens, resp.CacheWriteTokens, resp.CompletionTokens)
			}
		})
	}
}

// sameWire compares a body member with the JSON it must be.
func sameWire(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// A server that refuses prompt_cache_key with HTTP 400 gets the call once
// more without it, and answers it; the Model remembers, so the next call
// is sent without the key at once.
func TestRefusedCacheKeyIsDroppedOnce(t *testing.T) {
	t.Parallel()
	srv := newWireServer(t, "/v1/chat/completions", func(n int, body map[string]json.RawMessage, w http.ResponseWriter) {
		if _, ok := body["prompt_cache_key"]; ok {
			writeError(w, http.StatusBadRequest, "Unrecognized request argument supplied: prompt_cache_key")
			return
		}
		openAICachedReply(n, body, w)
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	req := prompt("hi")
	req.CacheKey = "wf_1:stage2"
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	bodies := srv.bodies()
	if len(bodies) != 2 || !strings.Contains(string(bodies[0]), "prompt_cache_key") || strings.Contains(string(bodies[1]), "prompt_cache_key") {
		t.Errorf("requests %q, want one with prompt_cache_key then one without", bodies)
	}
	if resp.Text != "ok" || resp.Retries != 1 {
		t.Errorf("reply %q after %d retries, want ok after 1", resp.Text, resp.Retries)
	}
	resp, err = m.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("second Generate: %v", err)
	}
	if bodies := srv.bodies(); len(bodies) != 3 || strings.Contains(string(bodies[2]), "prompt_cache_key") || resp.Retries != 0 {
		t.Errorf("second call: %d requests in all, the last %q, %d retries; want one more, without prompt_cache_key, no retry",
			len(bodies), bodies[len(bodies)-1], resp.Retries)
	}
}

// A 400 that does not name the cache markers (a prompt too long for the
// context, say) is the request's own fault: it fails after one request,
// not a second one without the markers, and later calls keep them.
func TestOtherBadRequestKeepsCacheKey(t *testing.T) {
	t.Parallel()
	srv := newWireServer(t, "/v1/chat/completions", func(n int, body map[string]json.RawMessage, w http.ResponseWriter) {
		writeError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	req := prompt("hi")
	req.CacheKey = "wf_1:stage1"
	for call := 1; call <= 2; call++ {
		_, err := m.Generate(context.Background(), req)
		if workflow.KindOf(err) != workflow.KindInvalid {
			t.Fatalf("call %d: Generate = %v, want an invalid request", call, err)
		}
		bodies := srv.bodies()
		if len(bodies) != call || !strings.Contains(string(bodies[call-1]), "prompt_cache_key") {
			t.Errorf("call %d: %d requests in all, the last %q; want one per call, with prompt_cache_key", call, len(bodies), bodies[len(bodies)-1])
		}
	}
}

// namesCacheMarks knows the refusals that name the markers or an unknown
// field, and no other.
func TestNamesCacheMarks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  string
		want bool
	}{
		{"Unrecognized request argument supplied: prompt_cache_key", true},
		{"cache_control: Extra inputs are not permitted", true},
		{`[{"type":"extra_forbidden","loc":["body","prompt_cache_key"]}]`, true},
		{"Unknown parameter: 'prompt_cache_key'.", true},
		{"This model's maximum context length is 8192 tokens", false},
		{"Invalid value for 'temperature'", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := namesCacheMarks(errors.New(tt.msg)); got != tt.want {
			t.Errorf("namesCacheMarks(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

// A breakpoint the body cannot take leaves the request whole and
// unmarked, with the reason; one that fits marks its last block.
func TestCacheBreakpointApply(t *testing.T) {
	t.Parallel()
	const msgs = `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":"c"}]`
	tests := []struct {
		name      string
		bp        cacheBreakpoint
		body      string
		want      string // the body after, "" when unchanged
		wantError string
	}{
		{"last of several blocks", cacheBreakpoint{message: 0}, `{"messages":` + msgs + `}`,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]},` +
				`{"role":"assistant","content":"c"}]}`, ""},
		{"string content becomes a block", cacheBreakpoint{message: 1}, `{"messages":` + msgs + `}`,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
				`{"role":"assistant","content":[{"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]}]}`, ""},
		{"no system prompt", cacheBreakpoint{system: true}, `{"messages":` + msgs + `}`, "", "no system prompt"},
		{"message beyond the body", cacheBreakpoint{message: 2}, `{"messages":` + msgs + `}`, "", "beyond"},
		{"empty text", cacheBreakpoint{system: true}, `{"system":"","messages":[]}`, "", "empty"},
		{"empty block array", cacheBreakpoint{message: 0}, `{"messages":[{"role":"user","content":[]}]}`, "", "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(tt.body))
			out, unmarked, err := patchBody(req, bodyPatch{set: map[string]json.RawMessage{"model": json.RawMessage(`"m"`)}, breakpoint: &tt.bp})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(out.Body)
			want := tt.want
			if want == "" {
				want = tt.body
			}
			var wantBody map[string]json.RawMessage
			_ = json.Unmarshal([]byte(want), &wantBody)
			wantBody["model"] = json.RawMessage(`"m"`) // set either way
			wantJSON, _ := json.Marshal(wantBody)
			sameWire(t, "body", got, string(wantJSON))
			if tt.wantError == "" && unmarked != nil || tt.wantError != "" && (unmarked == nil || !strings.Contains(unmarked.Error(), tt.wantError)) {
				t.Errorf("unmarked = %v, want %q", unmarked, tt.wantError)
			}
		})
	}
}

func TestAnthropicBreakpoint(t *testing.T) {
	t.Parallel()
	msgs := []workflow.PromptMessage{{Role: "user", Content: "a"}, {Role: "system", Content: "s"}, {Role: "user", Content: "b"}, {Role: "assistant", Content: "c"}}
	tests := []struct {
		prefix int
		want   *cacheBreakpoint
	}{
		{-1, nil}, {0, nil}, {1, &cacheBreakpoint{message: 0}}, {2, &cacheBreakpoint{system: true}},
		{3, &cacheBreakpoint{message: 1}}, {4, &cacheBreakpoint{message: 2}}, {5, &cacheBreakpoint{message: 2}},
	}
	for _, tt := range tests {
		if got := anthropicBreakpoint(msgs, tt.prefix); !cmp.Equal(got, tt.want, cmp.AllowUnexported(cacheBreakpoint{})) {
			t.Errorf("anthropicBreakpoint(prefix %d) = %+v, want %+v", tt.prefix, got, tt.want)
		}
	}
	if got := anthropicBreakpoint(nil, 1); got != nil {
		t.Errorf("no messages: %+v, want nil", got)
	}
}

// BenchmarkPatchBodyBreakpoint measures the transport's rewrite of a
// 40-message Anthropic request of about 130 KB that gets cache_control:
// the cost every marked call pays before it is sent.
func BenchmarkPatchBodyBreakpoint(b *testing.B) {
	msgs := make([]map[string]any, 40)
	for i := range msgs {
		role := []string{"user", "assistant"}[i%2]
		msgs[i] = map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": strings.Repeat("a fact <b>& more ", 90)}}}
	}
	raw, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "system": strings.Repeat("rule ", 2000), "messages": msgs})
	patch := bodyPatch{breakpoint: &cacheBreakpoint{message: 20}}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(string(raw)))
		if _, unmarked, err := patchBody(req, patch); err != nil || unmarked != nil {
			b.Fatal(err, unmarked)
		}
	}
}
