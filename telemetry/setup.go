package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/twostep/twostep/workflow"
)

// ServiceName is service.name when OTEL_SERVICE_NAME (or service.name in
// OTEL_RESOURCE_ATTRIBUTES) does not set one.
const ServiceName = "twostep-gateway"

// CaptureContentEnv turns on recording prompt and reply text (redacted).
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// Telemetry is the process's tracing: the tracer the engine uses, the
// tracer provider of the HTTP server's spans, and the provider to flush on
// shutdown. The zero value (and Setup's answer when tracing is off)
// traces nothing.
type Telemetry struct {
	provider *sdktrace.TracerProvider
	capture  bool
}

// Requested reports whether the environment asks for traces: an
// exporter other than "none" is named, or (with none named) an OTLP
// endpoint is set; and the SDK is not disabled.
func Requested(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) != "" {
		return len(exporterNames(getenv)) > 0
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup builds the tracing the environment asks for (see Requested). The
// exporters are OTEL_TRACES_EXPORTER's comma-separated list (default
// "otlp"): "otlp" over OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL ("http/protobuf", the default, or "grpc"),
// "console" (JSON lines on standard output, for debugging) and "none".
// The exporter, the sampler (OTEL_TRACES_SAMPLER), the batch processor
// (OTEL_BSP_*) and the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES) read their own variables from the process
// environment, as the SDK documents. It makes no network call; export
// errors are reported to onError. It sets the process's W3C trace-context
// propagator, which HTTP actions use to send traceparent.
func Setup(ctx context.Context, getenv func(string) string, onError func(error)) (*Telemetry, error) {
	if !Requested(getenv) {
		return &Telemetry{}, nil
	}
	exporters, err := newExporters(ctx, getenv, os.Stdout)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", ServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, exp := range exporters {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	if onError != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(onError))
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagators())
	capture := strings.EqualFold(strings.TrimSpace(getenv(CaptureContentEnv)), "true")
	return &Telemetry{provider: tp, capture: capture}, nil
}

// New returns a Telemetry over tp (tests pass one with an in-memory
// exporter); capture is CaptureContentEnv's value. It changes no global.
func New(tp *sdktrace.TracerProvider, capture bool) *Telemetry {
	return &Telemetry{provider: tp, capture: capture}
}

// propagators are W3C trace context and baggage.
func propagators() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Tracer returns the engine's tracer, nil when tracing is off (a nil
// interface, so the engine skips every span). opts.CaptureContent unset
// takes CaptureContentEnv's value.
func (t *Telemetry) Tracer(opts Options) workflow.Tracer {
	if t == nil || t.provider == nil {
		return nil
	}
	if opts.CaptureContent == nil {
		opts.CaptureContent = &t.capture
	}
	return NewTracer(t.provider, opts)
}

// CapturesContent reports whether CaptureContentEnv turned on recording
// prompts and replies.
func (t *Telemetry) CapturesContent() bool { return t != nil && t.capture }

// Enabled reports whether spans are exported.
func (t *Telemetry) Enabled() bool { return t != nil && t.provider != nil }

// Provider returns the tracer provider for the HTTP server's spans, nil
// (a nil interface) when tracing is off.
func (t *Telemetry) Provider() trace.TracerProvider {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider
}

// Propagator is how traces cross process boundaries: W3C trace context
// and baggage, in and out.
func Propagator() propagation.TextMapPropagator { return propagators() }

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}
