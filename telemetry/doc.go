// Package telemetry is twostep's OpenTelemetry adapter (DESIGN §9.5): it
// sets the SDK up from the standard OTEL_* environment variables, and
// implements workflow.Tracer with the spans of rounds, steps, model calls
// (GenAI semantic conventions), actions and store commits, plus the HTTP
// server middleware.
//
// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER is set (and
// OTEL_SDK_DISABLED is not true): then Setup returns a Telemetry whose
// Tracer is nil and Middleware is nil, so nothing is traced and nothing is
// spent. Prompt and reply text is recorded only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and always
// through the one redactor (package redact), like every other text that
// leaves the process.
package telemetry
