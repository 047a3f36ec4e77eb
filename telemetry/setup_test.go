package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twostep/twostep/telemetry"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestRequested(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none, none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none,otlp"}, true},
	}
	for _, tc := range tests {
		if got := telemetry.Requested(envOf(tc.env)); got != tc.want {
			t.Errorf("Requested(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// Off: no tracer (a nil interface), no middleware, nothing to flush.
// On: both protocols build without a network call; unknown exporters and
// protocols are refused by name.
func TestSetup(t *testing.T) {
	ctx := context.Background()
	off, err := telemetry.Setup(ctx, envOf(nil), nil)
	if err != nil || off.Enabled() || off.Tracer(telemetry.Options{}) != nil || off.Provider() != nil || off.Shutdown(ctx) != nil {
		t.Errorf("off: %v, enabled %v", err, off.Enabled())
	}
	for _, proto := range []string{"", "http/protobuf", "grpc"} {
		tel, err := telemetry.Setup(ctx, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
			"OTEL_EXPORTER_OTLP_PROTOCOL": proto, telemetry.CaptureContentEnv: "true"}), nil)
		if err != nil || !tel.Enabled() || tel.Tracer(telemetry.Options{}) == nil || tel.Provider() == nil || !tel.CapturesContent() {
			t.Errorf("protocol %q: %v", proto, err)
			continue
		}
		_ = tel.Shutdown(ctx)
	}
	for env, want := range map[string]string{
		"OTEL_TRACES_EXPORTER=otlp,zipkin":      "OTEL_TRACES_EXPORTER",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json": "OTEL_EXPORTER_OTLP_PROTOCOL",
	} {
		k, v, _ := strings.Cut(env, "=")
		_, err := telemetry.Setup(ctx, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", k: v}), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %s", env, err, want)
		}
	}
}
