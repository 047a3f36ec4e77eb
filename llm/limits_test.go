package llm

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const marker = "sk-MARKER-7f3a9c-do-not-leak"
	// A hostile server echoes the Authorization header into every error.
	tests := []struct {
		name   string
		status int
	}{
		{"401 not retried", http.StatusUnauthorized},
		{"503 retried and logged", http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeOpenAI(t, func(_ int, r *http.Request, _ chatRequest, w http.ResponseWriter) {
				writeError(w, tt.status, "Incorrect API key provided: "+r.Header.Get("Authorization"))
			})
			var logs bytes.Buffer
			ctx := zerolog.New(&logs).WithContext(context.Background())
			m := newTestModel(t, srv.url(), nil, func(c *Config) { c.OpenAIAPIKey = marker })
			_, err := m.Generate(ctx, prompt("hi"))
			if err == nil {
				t.Fatal("Generate succeeded, want an error")
			}
			if !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("err = %v, want the echoed key redacted (the provider text kept)", err)
			}
			for what, text := range map[string]string{"error": err.Error(), "public message": workflow.PublicMessage(err), "logs": logs.String()} {
				if strings.Contains(text, marker) {
					t.Errorf("the API key leaked into the %s: %s", what, text)
				}
			}
			if tt.status == http.StatusServiceUnavailable && !strings.Contains(logs.String(), "retrying") {
				t.Errorf("logs = %q, want the retries logged", logs.String())
			}
		})
	}
}

func TestValidateNeverQuotesSecrets(t *testing.T) {
	t.Parallel()
	const marker = "sk-MARKER-in-config"
	err := Config{Provider: "bogus", OpenAIAPIKey: marker, OpenAIBaseURL: "ftp://user:" + marker + "@host"}.Validate()
	if err == nil || strings.Contains(err.Error(), marker) {
		t.Errorf("Validate = %v, want an error that does not quote the key", err)
	}
}

func TestMaxInFlightBoundsConcurrentCalls(t *testing.T) {
	t.Parallel()
	var inFlight, peak atomic.Int32
	srv := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		writeCompletion(w, "ok", 1, 1)
	})
	m := newTestModel(t, srv.url(), nil, func(c *Config) { c.MaxInFlight = 2 })
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Generate(context.Background(), prompt("hi"))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("peak concurrent requests = %d, want at most MaxInFlight = 2", p)
	}
	if hits := srv.hits.Load(); hits != 8 {
		t.Errorf("server hits = %d, want 8", hits)
	}
}

func TestWaitingForASlotHonoursCancel(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	srv := newFakeOpenAI(t, func(_ int, r *http.Request, _ chatRequest, w http.ResponseWriter) {
		arrived <- struct{}{}
		blockUntilGone(r, 10*time.Second)
	})
	m := newTestModel(t, srv.url(), nil, func(c *Config) { c.MaxInFlight = 1 })
	holder, release := context.WithCancel(context.Background())
	holderDone := make(chan struct{})
	defer func() { release(); <-holderDone }()
	go func() {
		defer close(holderDone)
		_, _ = m.Generate(holder, prompt("holds the slot"))
	}()
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, prompt("waits"))
	if err == nil || ctx.Err() == nil || workflow.KindOf(err) == workflow.KindUnavailable {
		t.Errorf("err = %v, want the caller's deadline while waiting for a slot", err)
	}
	if hits := srv.hits.Load(); hits != 1 {
		t.Errorf("server hits = %d, want 1: the waiting call never went out", hits)
	}
}
