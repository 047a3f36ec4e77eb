package test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a local OTLP/HTTP trace receiver: it decodes each
// protobuf export request and keeps its spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	raw   bytes.Buffer
	paths []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		data, err := io.ReadAll(body)
		var msg collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &msg)
		}
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP protobuf request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.Path)
		r.raw.Write(data)
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitSpan waits until a span named name has arrived and returns every
// span so far.
func (r *otlpReceiver) waitSpan(t *testing.T, name string) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		spans := append([]*tracepb.Span(nil), r.spans...)
		r.mu.Unlock()
		for _, s := range spans {
			if s.Name == name {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q span arrived; got %d spans", name, len(spans))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// The built binary, given only OTEL_* variables, exports its spans over
// OTLP/HTTP: the request span continues the caller's traceparent, and the
// round, its model calls (GenAI attributes) and commits join that trace.
// The API key never appears in what is exported, even with content
// capture on.
func TestOTLPExportFromBinary(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	g := startGateway(t, nil, "LLM_PROVIDER=scripted", "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL,
		"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=twostep-e2e",
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, _, body := g.send(t, "POST", "/api/v1/workflows", gwAlice,
		map[string]any{"prompt": "otel1 say hello", "maxSteps": 3},
		"traceparent", "00-"+traceID+"-"+parentID+"-01")
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var wf wfView
	if err := jsonUnmarshal(body, &wf); err != nil {
		t.Fatal(err)
	}
	g.waitDone(t, gwAlice, wf.ID)
	spans := recv.waitSpan(t, "workflow.round")

	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	req := byName["POST /api/v1/workflows"]
	if len(req) != 1 {
		t.Fatalf("request spans %d, want 1; names: %v", len(req), keys(byName))
	}
	if got := hex.EncodeToString(req[0].TraceId); got != traceID {
		t.Errorf("request span trace %s, want the caller's %s", got, traceID)
	}
	if got := hex.EncodeToString(req[0].ParentSpanId); got != parentID {
		t.Errorf("request span parent %s, want the caller's span %s", got, parentID)
	}
	round := byName["workflow.round"][0]
	if hex.EncodeToString(round.TraceId) != traceID || spanAttr(round, "twostep.workflow.id") != wf.ID {
		t.Errorf("round span trace %x, workflow %q: want the caller's trace and %s", round.TraceId, spanAttr(round, "twostep.workflow.id"), wf.ID)
	}
	var chat *tracepb.Span
	for name, ss := range byName {
		if strings.HasPrefix(name, "chat ") {
			chat = ss[0]
		}
	}
	if chat == nil || spanAttr(chat, "gen_ai.operation.name") != "chat" || spanAttr(chat, "twostep.stage") == "" ||
		!strings.Contains(spanAttr(chat, "gen_ai.input.messages"), "otel1 say hello") {
		t.Errorf("no chat span with the GenAI attributes and the captured prompt; names: %v", keys(byName))
	}
	if len(byName["store.commit"]) == 0 || len(byName["workflow.step"]) == 0 {
		t.Errorf("no commit or step spans; names: %v", keys(byName))
	}
	if len(byName["GET /healthz"]) != 0 {
		t.Error("the health probe was traced")
	}
	var admin struct {
		TraceContext struct{ Origin, Round string } `json:"traceContext"`
	}
	g.expect(t, http.StatusOK, "GET", "/admin/v1/workflows/"+wf.ID, gwAdmin, nil, &admin)
	wantOrigin := "00-" + traceID + "-" + hex.EncodeToString(req[0].SpanId) + "-01"
	if admin.TraceContext.Origin != wantOrigin || !strings.HasPrefix(admin.TraceContext.Round, "00-"+traceID+"-"+hex.EncodeToString(round.SpanId)) {
		t.Errorf("admin traceContext %+v, want origin %s and the round span", admin.TraceContext, wantOrigin)
	}
	recv.mu.Lock()
	leaked := bytes.Contains(recv.raw.Bytes(), []byte(gwAPIKey)) || bytes.Contains(recv.raw.Bytes(), []byte(gwAlice))
	paths := recv.paths
	recv.mu.Unlock()
	if leaked {
		t.Error("an API key or token reached the exported spans")
	}
	if len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Errorf("export paths %v, want /v1/traces", paths)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// grpcReceiver is a local OTLP/gRPC trace receiver keeping the spans it
// is sent.
type grpcReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (g *grpcReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			g.spans = append(g.spans, ss.Spans...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc the binary exports over OTLP/gRPC.
func TestOTLPGRPCExportFromBinary(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &grpcReceiver{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, recv)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	g := startGateway(t, nil, "LLM_PROVIDER=scripted", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_BSP_SCHEDULE_DELAY=50")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "otel2 hello", "maxSteps": 2}, &wf)
	g.waitDone(t, gwAlice, wf.ID)
	deadline := time.Now().Add(20 * time.Second)
	for {
		recv.mu.Lock()
		var round bool
		for _, s := range recv.spans {
			round = round || (s.Name == "workflow.round" && spanAttr(s, "twostep.workflow.id") == wf.ID)
		}
		recv.mu.Unlock()
		if round {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no round span of %s arrived over gRPC", wf.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
