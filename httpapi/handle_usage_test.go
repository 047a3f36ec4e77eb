package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestBudgetSpentIs429WithRetryAfter: a create refused for a spent
// budget answers 429 with Retry-After counting the seconds until the
// budget resets (not the generic retry hint).
func TestBudgetSpentIs429WithRetryAfter(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	resets := time.Now().Add(90 * time.Minute)
	env.engine.CreateFn = func(engine.NewWorkflow) (*workflow.Workflow, error) {
		return nil, &workflow.BudgetError{What: "the daily budget of 10 tokens", ResetsAt: resets}
	}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, map[string]any{"prompt": "go"})
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status = %d, want 429: %s", rec.Code, rec.Body)
	}
	got, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || got < 89*60 || got > 90*60 {
		t.Errorf("Retry-After = %q, want about 5400 seconds", rec.Header().Get("Retry-After"))
	}
}

// TestUsage: the usage route shows the period's figures and whether it
// is spent (why a create answers 429); 404 without a budget.
func TestUsage(t *testing.T) {
	t.Parallel()
	resets := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var report UsageReport
	env := newTestEnv(t, func(o *Options) {
		o.Usage = func(_ context.Context, user string) (UsageReport, bool, error) {
			return report, user == "alice", nil
		}
	})
	tests := []struct {
		report UsageReport
		want   string
	}{
		{UsageReport{Period: "day", Used: workflow.Usage{Tokens: 120, Micros: 2500}, Limit: workflow.Usage{Tokens: 1000},
			ResetsAt: resets, Dollars: true},
			`{"limit":{"tokens":1000},"period":"day","resetsAt":"2026-11-28T00:00:00Z","spent":false,"used":{"tokens":120,"usd":0.0025}}`},
		{UsageReport{Period: "month", Used: workflow.Usage{Tokens: 900, Reserved: 4000, Spent: true}, Limit: workflow.Usage{Tokens: 1000},
			ResetsAt: resets, Spent: true},
			`{"limit":{"tokens":1000},"period":"month","resetsAt":"2026-11-28T00:00:00Z","spent":true,"used":{"tokens":900}}`},
	}
	for _, tc := range tests {
		report = tc.report
		rec := env.do(t, "GET", "/api/v1/usage", aliceToken, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d: %s", rec.Code, rec.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		delete(got, "$schema")
		if b, _ := json.Marshal(got); string(b) != tc.want {
			t.Errorf("usage = %s, want %s", b, tc.want)
		}
	}
	if rec := env.do(t, "GET", "/api/v1/usage", bobToken, nil); rec.Code != http.StatusNotFound {
		t.Errorf("a user without a budget: %d, want 404", rec.Code)
	}
}
