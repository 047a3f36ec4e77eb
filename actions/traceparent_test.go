package actions

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/twostep/twostep/workflow"
)

// An HTTP action run inside a span sends that span's W3C traceparent
// through the process propagator (telemetry.Setup installs it); without a
// span in the context it sends none.
func TestHTTPActionSendsTraceparent(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator()) })
	srv := newRecorder(t, answer(200, "application/json", `{"text": "ok"}`))
	r := lookupRegistry(t, srv, Limits{}, 0)
	c := withConn(call("crm.lookup", map[string]any{"customerId": "42"}), &workflow.Connection{Label: "crm"})

	if _, err := r.Execute(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "execute_tool crm.lookup")
	_, err := r.Execute(ctx, c)
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	got := srv.got()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if tp := got[0].Header.Get("traceparent"); tp != "" {
		t.Errorf("traceparent without a span = %q, want none", tp)
	}
	sc := span.SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-"
	if tp := got[1].Header.Get("traceparent"); !strings.HasPrefix(tp, want) {
		t.Errorf("traceparent = %q, want the span's %s..", tp, want)
	}
}
