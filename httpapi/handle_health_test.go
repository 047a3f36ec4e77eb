package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

func TestReadyz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pingErr error
		stalls  bool
		model   string
		status  int
		detail  string
	}{
		{"ready", nil, false, "scripted/x", 200, ""},
		{"store down", errors.New("dial tcp: refused"), false, "scripted/x", 503, "store unreachable"},
		// A stalled store must not hold the probe: the ping is bounded.
		{"store stalls", nil, true, "scripted/x", 503, "store unreachable"},
		{"no model", nil, false, "", 503, "model not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, func(o *Options) { o.ModelName = tt.model })
			env.store.pingErr, env.store.pingStalls = tt.pingErr, tt.stalls
			rec := env.do(t, "GET", "/readyz", "", nil)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != 200 {
				if ra := rec.Header().Get("Retry-After"); ra == "" || ra == "0" {
					t.Errorf("503 without a usable Retry-After: %q", ra)
				}
				if d := problem(t, rec)["detail"].(string); !strings.Contains(d, tt.detail) {
					t.Errorf("detail %q lacks %q", d, tt.detail)
				}
			}
		})
	}
}

// TestReadyzReportsAnUnreachableModel: a failing model probe is reported
// (status degraded, the reason in checks.model) without failing readiness,
// and a passing one leaves status ok.
func TestReadyzReportsAnUnreachableModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err        error
		status     string
		modelCheck string
	}{
		{nil, "ok", "ok"},
		{workflow.Errorf(workflow.KindUnavailable, `openai/foo: the provider does not list model "foo"`), "degraded",
			`openai/foo: the provider does not list model "foo"`},
	} {
		env := newTestEnv(t, func(o *Options) { o.ModelCheck = func(context.Context) error { return tt.err } })
		rec := env.do(t, "GET", "/readyz", "", nil)
		if rec.Code != 200 {
			t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
		}
		var h apiv1.Health
		if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		if h.Status != tt.status || h.Checks["model"] != tt.modelCheck || h.Checks["store"] != "ok" {
			t.Errorf("readyz = %+v, want status %s and checks.model %q", h, tt.status, tt.modelCheck)
		}
	}
}

// TestReadyzReportsAnUnreachableMCPServer: a down MCP server degrades
// readiness (still 200) and names why under checks["mcp.<name>"].
func TestReadyzReportsAnUnreachableMCPServer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		state, status string
	}{{"ok", "ok"}, {"cannot connect: connection refused", "degraded"}} {
		env := newTestEnv(t, func(o *Options) {
			o.Dependencies = func() map[string]string { return map[string]string{"mcp.files": tt.state} }
		})
		rec := env.do(t, "GET", "/readyz", "", nil)
		var h apiv1.Health
		if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil || rec.Code != 200 {
			t.Fatalf("readyz %d %s", rec.Code, rec.Body)
		}
		if h.Status != tt.status || h.Checks["mcp.files"] != tt.state || h.Checks["model"] != "ok" {
			t.Errorf("readyz = %+v, want status %s and checks[mcp.files] %q", h, tt.status, tt.state)
		}
	}
}

func TestMetricsCountRequestsAndRounds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	env.do(t, "GET", "/api/v1/workflows", "", nil)
	env.do(t, "GET", "/healthz", "", nil)
	w := testWorkflow("alice", workflow.StatusCompleted)
	w.StopReason = workflow.StopMaxSteps
	env.metrics.RoundEnded(w)
	env.metrics.ModelCalled(workflow.StageOne, "ok", 100, 20)
	env.metrics.StepFinished(workflow.ModeReact, "ai.process", workflow.MessageSuccess, 0)
	env.metrics.ApprovalRequested("crm.update")
	env.metrics.ApprovalDecided("approved", 90*time.Second)
	body := env.do(t, "GET", "/metrics", metricsToken, nil).Body.String()
	for _, want := range []string{
		`twostep_http_requests_total{method="GET",route="/api/v1/workflows",status="401"} 1`,
		`twostep_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`twostep_rounds_total{outcome="max_steps"} 1`,
		`twostep_model_calls_total{outcome="ok",stage="stage1"} 1`,
		`twostep_model_tokens_total{kind="prompt",stage="stage1"} 100`,
		`twostep_step_duration_seconds_count{action="ai.process",mode="react",status="success"} 1`,
		`twostep_approvals_total{event="requested"} 1`,
		`twostep_approvals_total{event="approved"} 1`,
		`twostep_approval_decision_seconds_sum{outcome="approved"} 90`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	rec := env.do(t, "GET", "/openapi.json", "", nil)
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	for path, method := range map[string]string{
		"/api/v1/workflows": "post", "/api/v1/workflows/{id}": "delete", "/api/v1/workflows/{id}/rounds": "post",
		"/api/v1/workflows/{id}/stop": "post", "/api/v1/workflows/{id}/resume": "post",
		"/api/v1/workflows/{id}/messages": "get", "/api/v1/workflows/{id}/events": "get",
		"/api/v1/workflows/{id}/documents/{docId}": "get", "/api/v1/actions": "get", "/readyz": "get",
	} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("OpenAPI lacks %s %s", method, path)
		}
	}
}

func TestRoundsStopResumeStatuses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	id := workflow.NewID(workflow.PrefixWorkflow)
	ok := func(user, gotID string) (*workflow.Workflow, error) {
		w := testWorkflow(user, workflow.StatusRunning)
		w.ID = gotID
		return w, nil
	}
	env.engine.StartFn = func(user, gotID string, in engine.NewRound) (*workflow.Workflow, error) {
		if in.Prompt == "busy" {
			return nil, workflow.Errorf(workflow.KindConflict, "a round is running; stop it or wait")
		}
		return ok(user, gotID)
	}
	env.engine.StopFn = ok
	env.engine.ResumeFn = func(string, string) (*workflow.Workflow, error) {
		return nil, workflow.Errorf(workflow.KindTooMany, "4 rounds are already running")
	}
	env.engine.DeleteFn = func(string, string) error { return nil }
	tests := []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", "/rounds", map[string]any{"prompt": "next"}, 202},
		{"POST", "/rounds", map[string]any{"prompt": "busy"}, 409},
		{"POST", "/rounds", map[string]any{"prompt": "x", "mode": "react"}, 422},
		{"POST", "/stop", nil, 200},
		{"POST", "/resume", nil, 429},
		{"DELETE", "", nil, 204},
	}
	for _, tt := range tests {
		rec := env.do(t, tt.method, "/api/v1/workflows/"+id+tt.path, aliceToken, tt.body)
		if rec.Code != tt.status {
			t.Errorf("%s %s %v: status %d, want %d: %s", tt.method, tt.path, tt.body, rec.Code, tt.status, rec.Body)
		}
		if tt.status >= 400 {
			problem(t, rec)
		}
		if tt.status == 429 && rec.Header().Get("Retry-After") != "5" {
			t.Errorf("429 Retry-After = %q", rec.Header().Get("Retry-After"))
		}
	}
}

func TestDocumentDownloadHeaders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(w)
	d := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), WorkflowID: w.ID,
		Name: "report \"q3\".html", MimeType: "text/html", Size: 21}, Content: []byte("<script>x()</script>\n")}
	env.store.docs[d.ID] = d
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/documents/"+d.ID, aliceToken, nil)
	if rec.Code != 200 || rec.Body.String() != string(d.Content) {
		t.Fatalf("status %d body %q", rec.Code, rec.Body)
	}
	for h, want := range map[string]string{
		"Content-Type": "text/html", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox",
		"Content-Disposition": `attachment; filename="report \"q3\".html"`,
	} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
}

// TestMetricsMethodLabelIsBounded: anyone can send any method token, so
// the method label takes only the standard methods and "other"; otherwise
// each invented method would add a time series for as long as the process
// lives.
func TestMetricsMethodLabelIsBounded(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for i := range 20 {
		env.do(t, fmt.Sprintf("INVENTED%d", i), "/healthz", "", nil)
	}
	env.do(t, "DELETE", "/healthz", "", nil)
	body := env.do(t, "GET", "/metrics", metricsToken, nil).Body.String()
	if strings.Contains(body, "INVENTED") {
		t.Errorf("/metrics has a series per invented method:\n%s", body)
	}
	for _, want := range []string{
		`twostep_http_requests_total{method="other",route="unmatched",status="405"} 20`,
		`twostep_http_requests_total{method="DELETE",route="unmatched",status="405"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestMetricsNeedTheirOwnToken: /metrics answers only to the metrics
// token — not anonymously, not to a user's or an admin's token; without a
// metrics token configured it answers 401 naming the variable to set;
// MetricsOpen (insecure development mode) serves it to anyone.
func TestMetricsNeedTheirOwnToken(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for token, want := range map[string]int{"": 401, aliceToken: 401, adminToken: 401, "tok-metrics-wrong-0123": 401, metricsToken: 200} {
		if rec := env.do(t, "GET", "/metrics", token, nil); rec.Code != want {
			t.Errorf("/metrics with token %q: %d, want %d", token, rec.Code, want)
		}
	}
	unset := newTestEnv(t, func(o *Options) { o.MetricsToken = nil })
	rec := unset.do(t, "GET", "/metrics", adminToken, nil)
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "GATEWAY_METRICS_TOKEN") {
		t.Errorf("/metrics with no metrics token configured: %d %s, want 401 naming GATEWAY_METRICS_TOKEN", rec.Code, rec.Body)
	}
	open := newTestEnv(t, func(o *Options) { o.MetricsOpen, o.MetricsToken = true, nil })
	if rec := open.do(t, "GET", "/metrics", "", nil); rec.Code != 200 {
		t.Errorf("/metrics in insecure development mode: %d, want 200", rec.Code)
	}
}
