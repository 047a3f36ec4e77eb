package httpapi

import (
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/twostep/twostep/telemetry"
)

// With Options.Tracing, each request is a server span named by its route
// template that continues the caller's traceparent, and the request log
// carries its trace and span ids.
func TestTracingMiddleware(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	env := newTestEnv(t, func(o *Options) {
		o.Tracing = Tracing{Provider: telemetry.New(tp, false).Provider(), Propagator: telemetry.Propagator(), Service: telemetry.ServiceName}
	})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	rec := env.doWith(t, "GET", "/api/v1/workflows/wf_01jx0000000000000000000000/messages", aliceToken,
		map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	if rec.Code != 404 {
		t.Fatalf("status %d", rec.Code)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "GET /api/v1/workflows/:id/messages" || s.Parent.TraceID().String() != traceID || s.Parent.SpanID().String() != parentID {
		t.Errorf("span %q with parent %v, want the route template under the caller's span", s.Name, s.Parent)
	}
	logs := env.logs.String()
	if !strings.Contains(logs, `"traceId":"`+traceID+`"`) || !strings.Contains(logs, `"spanId":"`+s.SpanContext.SpanID().String()+`"`) {
		t.Errorf("request log %s lacks the trace and span ids", logs)
	}
	exp.Reset()
	env.do(t, "GET", "/healthz", "", nil)
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("the health probe made %d spans", n)
	}
}
