// Package metrics holds the gateway's Prometheus collectors: it is the
// engine.Observer (rounds, steps, model calls and tokens,
// approvals, dispatch) and counts the HTTP requests httpapi reports to it;
// httpapi serves them at /metrics. Nothing here knows HTTP routing.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

var _ engine.Observer = (*Metrics)(nil)

// Metrics holds the gateway's Prometheus collectors on a registry of its
// own (never the global default one): HTTP requests by route and status,
// rounds by outcome, model calls by stage and outcome, tokens, and the step
// duration histogram. It is the engine.Observer and is safe for
// concurrent use.
type Metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	rounds     *prometheus.CounterVec
	modelCalls *prometheus.CounterVec
	tokens     *prometheus.CounterVec
	steps      *prometheus.HistogramVec
	approvals  *prometheus.CounterVec
	decisions  *prometheus.HistogramVec
	dispatch   *prometheus.CounterVec
	budgets    budgetRatios
}

// New registers the collectors (and the Go and process collectors) on a
// new registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "twostep_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "twostep_rounds_total", Help: "Finished rounds by outcome (stop reason, or the status when none).",
		}, []string{"outcome"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "twostep_model_calls_total", Help: "Model calls by stage and outcome (ok, rejected, error, cancelled).",
		}, []string{"stage", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "twostep_model_tokens_total", Help: "Model tokens by stage and kind (prompt or completion).",
		}, []string{"stage", "kind"}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "twostep_step_duration_seconds", Help: "Duration of executed steps by mode, action and status.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"mode", "action", "status"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "twostep_approvals_total", Help: "Approvals by event: requested, approved, rejected, expired.",
		}, []string{"event"}),
		decisions: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "twostep_approval_decision_seconds", Help: "Time from an approval's request to its decision, by outcome.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}, []string{"outcome"}),
	}
	m.dispatch = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "twostep_dispatch_total",
		Help: "Dispatch entries by event: enqueued, enqueue_failed, received, reclaimed (left by another instance), handed_off, acked, left.",
	}, []string{"event"})
	m.registry.MustRegister(m.dispatch)
	m.budgets = newBudgetRatios(m.registry)
	m.registry.MustRegister(m.requests, m.rounds, m.modelCalls, m.tokens, m.steps, m.approvals, m.decisions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Registry returns the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// RequestServed counts one HTTP request by method, route pattern and
// status code.
func (m *Metrics) RequestServed(method, route, status string) {
	m.requests.WithLabelValues(method, route, status).Inc()
}

// RoundEnded counts a round that finished, by its stop reason (or status).
func (m *Metrics) RoundEnded(w *workflow.Workflow) {
	outcome := string(w.StopReason)
	if outcome == "" {
		outcome = string(w.Status)
	}
	m.rounds.WithLabelValues(outcome).Inc()
}

// StepFinished observes one executed step's duration.
func (m *Metrics) StepFinished(mode workflow.ModeName, action string, status workflow.MessageStatus, d time.Duration) {
	m.steps.WithLabelValues(string(mode), action, string(status)).Observe(d.Seconds())
}

// ModelCalled counts one model call (outcome ok, rejected, error or
// cancelled) and its tokens.
func (m *Metrics) ModelCalled(stage workflow.Stage, outcome string, promptTokens, completionTokens int) {
	st := string(stage)
	if st == "" {
		st = "unknown"
	}
	m.modelCalls.WithLabelValues(st, outcome).Inc()
	m.tokens.WithLabelValues(st, "prompt").Add(float64(max(promptTokens, 0)))
	m.tokens.WithLabelValues(st, "completion").Add(float64(max(completionTokens, 0)))
}

// ApprovalRequested counts a round paused for approval.
func (m *Metrics) ApprovalRequested(string) { m.approvals.WithLabelValues("requested").Inc() }

// Dispatched counts a dispatch event (workflow.DispatchObserver).
func (m *Metrics) Dispatched(event string) { m.dispatch.WithLabelValues(event).Inc() }

// ApprovalDecided counts a decision (approved, rejected or expired) and
// observes how long it took.
func (m *Metrics) ApprovalDecided(outcome string, wait time.Duration) {
	m.approvals.WithLabelValues(outcome).Inc()
	m.decisions.WithLabelValues(outcome).Observe(wait.Seconds())
}
