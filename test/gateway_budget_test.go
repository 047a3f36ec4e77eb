package test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// usageView is GET /api/v1/usage's answer.
type usageView struct {
	Period string `json:"period"`
	Used   struct {
		Tokens int64 `json:"tokens"`
	} `json:"used"`
	Limit struct {
		Tokens int64 `json:"tokens"`
	} `json:"limit"`
	ResetsAt time.Time `json:"resetsAt"`
	Spent    bool      `json:"spent"`
}

// TestBudgetOverTwoInstances (Redis, two instances sharing a budget):
//
//   - alice's budget of 1000 tokens a day cannot hold her round: calls go
//     while it has room (the last one crosses it), then the next call is
//     not made (the model served exactly the calls the workflow counts,
//     and usage equals their tokens), the round stops with stop reason
//     budget and an assistant message saying why, and new work on either
//     instance is 429 with Retry-After until midnight UTC;
//   - bob's 200 rounds, created at once half on each instance, cannot
//     overspend his budget together: every round ends (within a minute),
//     the tokens all his workflows counted equal his usage, and that stays
//     within the budget plus what one call may use (oneCall).
func TestBudgetOverTwoInstances(t *testing.T) {
	url := redisURL(t)
	// oneCall bounds one call of these rounds: its prompt and its output.
	const aliceBudget, bobBudget, oneCall = 1000, 40000, 1000 + 4096
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := fmt.Sprintf(`limits:
  maxRunningPerUser: 1000
  workers: 32
budgets:
  users:
    alice: {tokens: %d, period: day}
    bob: {tokens: %d, period: day}
`, aliceBudget, bobBudget)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	env := []string{"REDIS_URL=" + url, "GATEWAY_CONFIG=" + conf}
	a, b := startGateway(t, model, env...), startGateway(t, model, env...)

	var wf wfView
	a.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "budget1 go"}, &wf)
	done := b.waitDone(t, gwAlice, wf.ID)
	if done.Status != "stopped" || done.StopReason != "budget" {
		t.Fatalf("alice's round ended %s/%s, want stopped/budget: %+v", done.Status, done.StopReason, done)
	}
	msgs := b.messages(t, gwAlice, wf.ID)
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || !strings.Contains(last.Text, "daily budget of 1000 tokens") {
		t.Errorf("last message %+v, want the assistant explaining the budget", last)
	}
	calls, _ := model.stats()
	if calls != done.Stats.LLMCalls {
		t.Errorf("the model served %d calls, the workflow counted %d: a call was made past the budget", calls, done.Stats.LLMCalls)
	}
	var u usageView
	a.expect(t, http.StatusOK, "GET", "/api/v1/usage", gwAlice, nil, &u)
	spent := int64(done.Stats.PromptTokens + done.Stats.CompletionTokens)
	if u.Period != "day" || u.Limit.Tokens != aliceBudget || u.Used.Tokens != spent || spent < aliceBudget || spent > aliceBudget+oneCall || !u.Spent {
		t.Errorf("usage %+v, want day, limit %d, used %d (the workflow's tokens, the last call crossing the budget), spent", u, aliceBudget, spent)
	}
	cu, err := b.client(t, gwAlice).Usage(context.Background())
	if err != nil || cu.Used.Tokens == nil || *cu.Used.Tokens != u.Used.Tokens || !cu.Spent || cu.Limit.Tokens == nil || *cu.Limit.Tokens != aliceBudget || cu.Used.USD != nil {
		t.Errorf("client.Usage = %+v, %v; want the same figures, no dollars", cu, err)
	}
	midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	if !u.ResetsAt.Equal(midnight) {
		t.Errorf("resetsAt %v, want %v", u.ResetsAt, midnight)
	}
	for _, g := range []*gateway{a, b} {
		for _, req := range []struct{ method, path string }{
			{"POST", "/api/v1/workflows"}, {"POST", "/api/v1/workflows/" + wf.ID + "/resume"},
		} {
			status, hdr, body := g.send(t, req.method, req.path, gwAlice, map[string]any{"prompt": "more"})
			retry, err := strconv.Atoi(hdr.Get("Retry-After"))
			if status != http.StatusTooManyRequests || err != nil || retry < 1 || retry > int(time.Until(midnight).Seconds())+1 {
				t.Errorf("%s %s with the budget spent: %d, Retry-After %q (%s); want 429 until midnight", req.method, req.path,
					status, hdr.Get("Retry-After"), body)
			}
		}
	}

	// bob: 200 rounds at once over the two instances.
	start := time.Now()
	var mu sync.Mutex
	var ids []string
	refused := 0
	var wg sync.WaitGroup
	for i := range 200 {
		g := []*gateway{a, b}[i%2]
		wg.Go(func() {
			var w wfView
			status, _, body := g.send(t, "POST", "/api/v1/workflows", gwBob, map[string]any{"prompt": fmt.Sprintf("bob%d go", i)})
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusCreated:
				if err := jsonUnmarshal(body, &w); err != nil {
					t.Errorf("create: %v", err)
				}
				ids = append(ids, w.ID)
			case http.StatusTooManyRequests:
				refused++
			default:
				t.Errorf("create %d: %d %s", i, status, body)
			}
		})
	}
	wg.Wait()
	// 200 requests at once leave connections the client dialled but never
	// used; the gateway's shutdown would wait for them (net/http counts a
	// new connection as busy for 5 s).
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	var total int64
	stopped := 0
	deadline := time.Now().Add(time.Minute)
	for _, id := range ids {
		for {
			var w wfView
			a.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+id, gwBob, nil, &w)
			if w.Status != "running" {
				total += int64(w.Stats.PromptTokens + w.Stats.CompletionTokens)
				if w.StopReason == "budget" {
					stopped++
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("workflow %s still running a minute after the creates", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var ub usageView
	b.expect(t, http.StatusOK, "GET", "/api/v1/usage", gwBob, nil, &ub)
	if ub.Used.Tokens != total || total > bobBudget+oneCall {
		t.Errorf("bob's usage %d, his workflows counted %d, budget %d: want equal and within it plus one call", ub.Used.Tokens, total, bobBudget)
	}
	if stopped == 0 {
		t.Errorf("no round stopped for the budget: it never came into play")
	}
	t.Logf("bob: %d rounds created, %d refused at create, %d stopped by the budget; %d of %d tokens used; all ended in %v",
		len(ids), refused, stopped, total, bobBudget, time.Since(start).Round(10*time.Millisecond))
}
