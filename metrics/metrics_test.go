package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Every observer call shows in the served text with its labels, on the
// metrics' own registry.
func TestObserverCallsAreServed(t *testing.T) {
	t.Parallel()
	m := New()
	m.RequestServed("GET", "/healthz", "200")
	m.RoundEnded(&workflow.Workflow{Status: workflow.StatusCompleted, StopReason: workflow.StopMaxSteps})
	m.RoundEnded(&workflow.Workflow{Status: workflow.StatusStopped})
	m.ModelCalled(workflow.StageOne, "ok", 100, 20)
	m.ModelCalled("", "error", -5, 0) // no stage: "unknown"; negative tokens count as none
	m.StepFinished(workflow.ModeReact, "ai.process", workflow.MessageSuccess, 2*time.Second)
	m.ApprovalRequested("crm.update")
	m.ApprovalDecided("approved", 90*time.Second)
	m.Dispatched("enqueued")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`twostep_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`twostep_rounds_total{outcome="max_steps"} 1`,
		`twostep_rounds_total{outcome="stopped"} 1`,
		`twostep_model_calls_total{outcome="ok",stage="stage1"} 1`,
		`twostep_model_calls_total{outcome="error",stage="unknown"} 1`,
		`twostep_model_tokens_total{kind="prompt",stage="stage1"} 100`,
		`twostep_model_tokens_total{kind="completion",stage="stage1"} 20`,
		`twostep_model_tokens_total{kind="prompt",stage="unknown"} 0`,
		`twostep_step_duration_seconds_sum{action="ai.process",mode="react",status="success"} 2`,
		`twostep_approvals_total{event="requested"} 1`,
		`twostep_approval_decision_seconds_sum{outcome="approved"} 90`,
		`twostep_dispatch_total{event="enqueued"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
