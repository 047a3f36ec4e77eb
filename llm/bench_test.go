package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The two benchmarks below send the same chat request to the same local
// server; their difference is the adapter's overhead per call (langchaingo's
// request building and decoding, the observing transport, the in-flight
// slot, the retry loop and the usage mapping).

func benchServer(b *testing.B) *fakeOpenAI {
	return newFakeOpenAI(b, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeCompletion(w, `{"action":"workflow.complete","actionObjective":"answer"}`, 120, 16)
	})
}

func BenchmarkGenerateAdapter(b *testing.B) {
	srv := benchServer(b)
	m, err := New(context.Background(), Config{Provider: "openai", Model: "bench", OpenAIBaseURL: srv.url(),
		OpenAIAPIKey: "k", Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	req := prompt(strings.Repeat("plan the next step. ", 50))
	req.JSON = true
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGenerateRawHTTP(b *testing.B) {
	srv := benchServer(b)
	client := &http.Client{}
	body, _ := json.Marshal(map[string]any{
		"model": "bench",
		"messages": []map[string]string{
			{"role": "system", "content": "You answer in JSON."},
			{"role": "user", "content": strings.Repeat("plan the next step. ", 50)},
		},
		"response_format": map[string]string{"type": "json_object"},
	})
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, srv.url()+"/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Choices []struct{ Message struct{ Content string } }
			Usage   struct{ PromptTokens, CompletionTokens int }
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices) != 1 {
			b.Fatalf("decode: %v", err)
		}
	}
}

func BenchmarkTokenizerCount(b *testing.B) {
	var tk Tokenizer
	text := strings.Repeat("The engine resolves Stage 1's document references server-side. ", 30)
	tk.Count("warm up")
	b.ReportAllocs()
	for b.Loop() {
		tk.Count(text)
	}
}
