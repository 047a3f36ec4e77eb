package telemetry

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporterNames returns OTEL_TRACES_EXPORTER's list without "none" and
// duplicates; "otlp" when the variable is unset.
func exporterNames(getenv func(string) string) []string {
	raw := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if raw == "" {
		return []string{"otlp"}
	}
	var names []string
	for n := range strings.SplitSeq(raw, ",") {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && n != "none" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// newExporters returns the span exporters named by OTEL_TRACES_EXPORTER;
// console writes to stdout. The OTLP exporters read their endpoint,
// headers, timeout, compression and certificate variables themselves.
func newExporters(ctx context.Context, getenv func(string) string, stdout io.Writer) ([]sdktrace.SpanExporter, error) {
	var out []sdktrace.SpanExporter
	for _, name := range exporterNames(getenv) {
		var (
			exp sdktrace.SpanExporter
			err error
		)
		switch name {
		case "otlp":
			exp, err = newOTLP(ctx, getenv)
		case "console":
			exp, err = stdouttrace.New(stdouttrace.WithWriter(stdout))
		default:
			err = fmt.Errorf("OTEL_TRACES_EXPORTER names %q: supported are otlp, console and none", name)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, exp)
	}
	return out, nil
}

// newOTLP returns the OTLP exporter of the configured protocol.
func newOTLP(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch proto {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q is not supported: use http/protobuf or grpc", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	return exp, nil
}
