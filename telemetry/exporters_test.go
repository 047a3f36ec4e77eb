package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// OTEL_TRACES_EXPORTER=console writes each span as JSON to the writer;
// "none" entries and duplicates are dropped.
func TestConsoleExporter(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OTEL_TRACES_EXPORTER": " console ,none,console"}
	var out bytes.Buffer
	exps, err := newExporters(context.Background(), func(k string) string { return env[k] }, &out)
	if err != nil || len(exps) != 1 {
		t.Fatalf("exporters %v, %v; want one console exporter", exps, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exps[0]))
	_, span := tp.Tracer("t").Start(context.Background(), "workflow.round")
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"Name":"workflow.round"`) {
		t.Errorf("console output %q, want the span as JSON", out.String())
	}
}
