package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the OpenTelemetry server span of every request (DESIGN
// §9.5): one span per request, named by method and route template,
// continuing an incoming traceparent. The probes and the metrics scrape
// are not traced. The zero value traces nothing.
type Tracing struct {
	// Provider makes the spans; nil: no server spans.
	Provider trace.TracerProvider
	// Propagator reads the incoming trace context (nil: the process's).
	Propagator propagation.TextMapPropagator
	// Service names the server in the spans.
	Service string
}

// middleware is the gin middleware of t, nil when t traces nothing.
func (t Tracing) middleware() gin.HandlerFunc {
	if t.Provider == nil {
		return nil
	}
	opts := []otelgin.Option{otelgin.WithTracerProvider(t.Provider), otelgin.WithFilter(notProbe)}
	if t.Propagator != nil {
		opts = append(opts, otelgin.WithPropagators(t.Propagator))
	}
	return otelgin.Middleware(t.Service, opts...)
}

// notProbe leaves the probes and the metrics scrape untraced: they run
// every few seconds and would drown the traces that matter.
func notProbe(r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return false
	}
	return true
}
