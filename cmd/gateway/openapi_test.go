package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/wiring"
)

var registerStreamDecoders sync.Once

// apiCall is one request of the OpenAPI conformance walk.
type apiCall struct {
	name   string
	method string
	path   string
	token  string
	ctype  string // Content-Type of body ("" → application/json when body is set)
	body   string
	prefer string // Prefer header
	status int    // the status the walk expects (the document must declare it)
}

// TestOpenAPIDescribesEveryResponse drives every route of the real gateway
// (offline model, memory store) through success and error answers and
// validates each response — status, content type, headers and body —
// against the OpenAPI document the gateway serves. Every operation of the
// document must be exercised, so a new route cannot go undocumented or
// untested.
func TestOpenAPIDescribesEveryResponse(t *testing.T) {
	t.Parallel()
	registerStreamDecoders.Do(func() {
		// Raw bytes are checked as strings; an event stream as the list
		// of its events, each one's data decoded from JSON.
		openapi3filter.RegisterBodyDecoder("text/event-stream", decodeEventStream)
		openapi3filter.RegisterBodyDecoder("text/plain", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("application/jsonl", openapi3filter.FileBodyDecoder)
	})
	const (
		alice = "alice-token-000000001"
		bob   = "bob-token-00000000002"
		root  = "root-token-0000000003"
	)
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(file, []byte("limits:\n  maxBodyBytes: 65536\napprovals:\n  actions: {document.extract: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := wiring.LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:" + alice + ",bob:" + bob, "GATEWAY_ADMIN_TOKENS": "root:" + root,
		"LLM_PROVIDER": "scripted", "GATEWAY_CONFIG": file,
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g, err := wiring.Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())
	h := g.API.Routes()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the served document does not load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the served document is not valid OpenAPI: %v", err)
	}
	// Match requests against the paths alone, whatever servers say.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}

	exercised := map[string]bool{}
	do := func(c apiCall) *httptest.ResponseRecorder {
		t.Helper()
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		req := httptest.NewRequest(c.method, c.path, body)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		if c.prefer != "" {
			req.Header.Set("Prefer", c.prefer)
		}
		reqCtx, cancelReq := context.WithTimeout(ctx, 10*time.Second)
		defer cancelReq()
		req = req.WithContext(reqCtx)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("%s: %s %s = %d, want %d: %s", c.name, c.method, c.path, rec.Code, c.status, rec.Body)
		}
		check := httptest.NewRequest(c.method, "http://gateway"+c.path, nil)
		route, params, err := router.FindRoute(check)
		if errors.Is(err, routers.ErrMethodNotAllowed) && rec.Code == http.StatusMethodNotAllowed {
			// No operation can declare a method the path lacks; the
			// document's description promises a problem document.
			var problem any
			if rec.Header().Get("Content-Type") != "application/problem+json" || json.Unmarshal(rec.Body.Bytes(), &problem) != nil {
				t.Errorf("%s: 405 is not a problem document: %s %s", c.name, rec.Header().Get("Content-Type"), rec.Body)
			} else if err := doc.Components.Schemas["ErrorModel"].Value.VisitJSON(problem); err != nil {
				t.Errorf("%s: the 405 problem does not match ErrorModel: %v", c.name, err)
			}
			return rec
		}
		if err != nil {
			t.Errorf("%s: %s %s is not in the document: %v", c.name, c.method, c.path, err)
			return rec
		}
		exercised[c.method+" "+route.Path] = true
		in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
			Body:    io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("%s: %s %s → %d %s does not match the document:\n%v\nbody: %.400s",
				c.name, c.method, c.path, rec.Code, rec.Header().Get("Content-Type"), err, rec.Body)
		}
		return rec
	}
	decode := func(rec *httptest.ResponseRecorder, v any) {
		t.Helper()
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatalf("decode %s: %v", rec.Body, err)
		}
	}

	doc64 := base64.StdEncoding.EncodeToString([]byte("Quarterly numbers: 42\n"))
	created := do(apiCall{name: "create", method: "POST", path: "/api/v1/workflows", token: alice, status: 201,
		body: `{"prompt":"Summarise the notes","documents":[{"name":"notes.txt","mimeType":"text/plain","content":"` + doc64 + `"}]}`})
	var wf struct{ ID string }
	decode(created, &wf)
	paused, err := enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID)
	if err != nil || paused.PendingApproval == nil {
		t.Fatalf("the extract step did not pause for approval: %+v, %v", paused, err)
	}
	base := "/api/v1/workflows/" + wf.ID
	decide := base + "/approvals/" + paused.PendingApproval.ID
	do(apiCall{name: "list awaiting approval", method: "GET", path: "/api/v1/workflows?status=awaiting_approval", token: alice, status: 200})
	do(apiCall{name: "invalid edit", method: "POST", path: decide, token: alice, body: `{"decision":"approve","parameters":{"format":7}}`, status: 422})
	do(apiCall{name: "bob decides", method: "POST", path: decide, token: bob, body: `{"decision":"approve"}`, status: 404})
	do(apiCall{name: "approve and remember", method: "POST", path: decide, token: alice, body: `{"decision":"approve","remember":{"scope":"workflow","ttl":"1h"}}`, status: 202})
	if _, err := enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil {
		t.Fatal(err)
	}
	do(apiCall{name: "decide twice", method: "POST", path: decide, token: alice, body: `{"decision":"reject"}`, status: 409})
	var standing struct{ Approvals []struct{ ID string } }
	decode(do(apiCall{name: "standing approvals", method: "GET", path: "/api/v1/approvals/standing", token: alice, status: 200}), &standing)
	if len(standing.Approvals) != 1 {
		t.Fatalf("standing approvals = %+v, want the one remembered", standing)
	}
	do(apiCall{name: "bob revokes", method: "DELETE", path: "/api/v1/approvals/standing/" + standing.Approvals[0].ID, token: bob, status: 404})
	do(apiCall{name: "revoke", method: "DELETE", path: "/api/v1/approvals/standing/" + standing.Approvals[0].ID, token: alice, status: 204})
	waited := do(apiCall{name: "create and wait", method: "POST", path: "/api/v1/workflows", token: alice, prefer: "wait=10",
		body: `{"prompt":"Nothing to read"}`, status: 200})
	var answer struct {
		Status   string
		Messages []struct{ Role, Text string }
	}
	decode(waited, &answer)
	if waited.Header().Get("Preference-Applied") != "wait" || answer.Status != "completed" || len(answer.Messages) != 2 ||
		answer.Messages[1].Role != "assistant" {
		t.Errorf("a waited create answered %s with %+v, want the completed round's two messages", waited.Header().Get("Preference-Applied"), answer)
	}
	agui := `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"m1","role":"user","content":"Nothing to read"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
	do(apiCall{name: "agui run", method: "POST", path: "/api/v1/agui", token: alice, body: agui, status: 200})
	do(apiCall{name: "agui run without a prompt", method: "POST", path: "/api/v1/agui", token: alice,
		body: `{"threadId":"thread-2","runId":"run-1","messages":[],"tools":[],"context":[]}`, status: 422})
	var msgs struct {
		Messages []struct {
			Documents []struct{ ID string }
		}
	}
	decode(do(apiCall{name: "messages", method: "GET", path: base + "/messages", token: alice, status: 200}), &msgs)
	docID := ""
	for _, m := range msgs.Messages {
		for _, d := range m.Documents {
			docID = d.ID
		}
	}
	if docID == "" {
		t.Fatal("no document in the messages")
	}
	traces, err := g.Store.Traces(ctx, wf.ID)
	if err != nil || len(traces) == 0 {
		t.Fatalf("traces: %v, %d", err, len(traces))
	}
	traceID := traces[0].ID

	for _, c := range []apiCall{
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", status: 200},
		{name: "list", method: "GET", path: "/api/v1/workflows?limit=10", token: alice, status: 200},
		{name: "get", method: "GET", path: base, token: alice, status: 200},
		{name: "document", method: "GET", path: base + "/documents/" + docID, token: alice, status: 200},
		{name: "events of a finished round", method: "GET", path: base + "/events", token: alice, status: 200},
		{name: "actions", method: "GET", path: "/api/v1/actions", token: alice, status: 200},
		{name: "stop a finished workflow", method: "POST", path: base + "/stop", token: alice, status: 409},
		{name: "resume a finished workflow", method: "POST", path: base + "/resume", token: alice, status: 409},
		{name: "no token", method: "GET", path: "/api/v1/workflows", status: 401},
		{name: "another user's workflow", method: "GET", path: base, token: bob, status: 404},
		{name: "unknown workflow", method: "GET", path: "/api/v1/workflows/wf_unknown0000000000000", token: alice, status: 404},
		{name: "unknown document", method: "GET", path: base + "/documents/doc_unknown000000000000", token: alice, status: 404},
		{name: "malformed JSON", method: "POST", path: "/api/v1/workflows", token: alice, body: `{"prompt":`, status: 400},
		{name: "wrong type", method: "POST", path: "/api/v1/workflows", token: alice, body: `{"prompt":7}`, status: 422},
		{name: "wrong content type", method: "POST", path: "/api/v1/workflows", token: alice, body: `prompt=x`, ctype: "application/x-www-form-urlencoded", status: 415},
		{name: "oversize body", method: "POST", path: base + "/rounds", token: alice, status: 413,
			body: `{"prompt":"` + strings.Repeat("x", 70<<10) + `"}`},
		{name: "wrong method", method: "PUT", path: base, token: alice, status: 405},
		{name: "bad limit", method: "GET", path: "/api/v1/workflows?limit=0", token: alice, status: 422},
		{name: "garbage cursor", method: "GET", path: "/api/v1/workflows?cursor=garbage", token: alice, status: 422},
		{name: "undecodable cursor", method: "GET", path: "/api/v1/workflows?cursor=%zz", token: alice, status: 422},
		{name: "undecodable query without parameters", method: "GET", path: "/api/v1/actions?x=%zz", token: alice, status: 422},
		{name: "unknown parameter", method: "GET", path: "/api/v1/actions?bogus=1", token: alice, status: 422},
		{name: "admin unknown parameter", method: "GET", path: "/admin/v1/templates?bogus=1", token: root, status: 422},
		{name: "undecodable query on readyz", method: "GET", path: "/readyz?x=%zz", status: 422},
		{name: "garbage cursor with a status", method: "GET", path: "/api/v1/workflows?status=completed&cursor=garbage", token: alice, status: 422},
		{name: "admin garbage cursor", method: "GET", path: "/admin/v1/workflows?cursor=garbage", token: root, status: 422},
		{name: "admin actions", method: "GET", path: "/admin/v1/actions", token: root, status: 200},
		{name: "admin templates", method: "GET", path: "/admin/v1/templates", token: root, status: 200},
		{name: "admin list", method: "GET", path: "/admin/v1/workflows", token: root, status: 200},
		{name: "admin get", method: "GET", path: "/admin/v1/workflows/" + wf.ID, token: root, status: 200},
		{name: "admin messages", method: "GET", path: "/admin/v1/workflows/" + wf.ID + "/messages", token: root, status: 200},
		{name: "admin traces", method: "GET", path: "/admin/v1/workflows/" + wf.ID + "/traces", token: root, status: 200},
		{name: "admin economy", method: "GET", path: "/admin/v1/workflows/" + wf.ID + "/economy", token: root, status: 200},
		{name: "usage without budgets", method: "GET", path: "/api/v1/usage", token: alice, status: 404},
		{name: "admin webhook deliveries", method: "GET", path: "/admin/v1/webhooks/deliveries?workflow=" + wf.ID, token: root, status: 200},
		{name: "admin webhook deliveries bad id", method: "GET", path: "/admin/v1/webhooks/deliveries?workflow=nope", token: root, status: 422},
		{name: "admin events", method: "GET", path: "/admin/v1/workflows/" + wf.ID + "/events", token: root, status: 200},
		{name: "admin events of an unknown workflow", method: "GET", path: "/admin/v1/workflows/wf_unknown0000000000000/events", token: root, status: 404},
		{name: "admin trace", method: "GET", path: "/admin/v1/traces/" + traceID, token: root, status: 200},
		{name: "admin render", method: "POST", path: "/admin/v1/workflows/" + wf.ID + "/render", token: root, body: `{"stage":"stage1"}`, status: 200},
		{name: "admin replay", method: "POST", path: "/admin/v1/traces/" + traceID + "/replay", token: root, body: `{}`, status: 200},
		{name: "admin as a user", method: "GET", path: "/admin/v1/workflows", token: alice, status: 403},
		{name: "admin unknown trace", method: "GET", path: "/admin/v1/traces/tr_unknown", token: root, status: 404},
		{name: "fork", method: "POST", path: base + "/fork", token: alice, body: `{"round":1,"step":1}`, status: 201},
		{name: "fork at a step never reached", method: "POST", path: base + "/fork", token: alice, body: `{"round":1,"step":99}`, status: 422},
		{name: "fork with a refused selection", method: "POST", path: base + "/fork", token: alice,
			body: `{"round":1,"step":1,"selection":{"action":"no.such"}}`, status: 422},
		{name: "fork another user's workflow", method: "POST", path: base + "/fork", token: bob, body: `{"round":1,"step":1}`, status: 404},
	} {
		do(c)
	}

	round := do(apiCall{name: "new round", method: "POST", path: base + "/rounds", token: alice, body: `{"prompt":"And now in one line"}`, status: 202})
	if round.Code == 202 {
		if _, err := enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil {
			t.Fatal(err)
		}
	}
	do(apiCall{name: "admin dataset", method: "GET", path: "/admin/v1/datasets?stage=stage1", token: root, status: 200})
	do(apiCall{name: "admin dataset of no stage", method: "GET", path: "/admin/v1/datasets", token: root, status: 422})
	do(apiCall{name: "admin experiment with a bad template", method: "POST", path: "/admin/v1/experiments", token: root,
		body: `{"stage":"stage2","override":{"templates":{"stage2":"{{KEY:NOPE}}"}}}`, status: 422})
	var experiment struct{ ID string }
	decode(do(apiCall{name: "admin experiment", method: "POST", path: "/admin/v1/experiments", token: root,
		body: `{"stage":"stage2","workflows":["` + wf.ID + `"]}`, status: 202}), &experiment)
	do(apiCall{name: "admin get experiment", method: "GET", path: "/admin/v1/experiments/" + experiment.ID, token: root, status: 200})
	do(apiCall{name: "admin stop experiment", method: "POST", path: "/admin/v1/experiments/" + experiment.ID + "/stop", token: root, status: 200})
	do(apiCall{name: "admin unknown experiment", method: "GET", path: "/admin/v1/experiments/ex_unknown", token: root, status: 404})
	do(apiCall{name: "delete", method: "DELETE", path: base, token: alice, status: 204})
	do(apiCall{name: "deleted", method: "GET", path: base, token: alice, status: 404})

	var missing []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !exercised[method+" "+path] {
				missing = append(missing, method+" "+path)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations this walk never exercised (add a request for each):\n  %s", strings.Join(missing, "\n  "))
	}
}

// decodeEventStream turns a text/event-stream body into the array of events
// the document describes: {event, data (decoded JSON), id (a number)} for
// every frame with data; a frame without data (retry:) is no event.
func decodeEventStream(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	events := []any{}
	for frame := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n\n") {
		ev := map[string]any{}
		for line := range strings.SplitSeq(frame, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "event":
				ev["event"] = v
			case "id":
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("event id %q: %w", v, err)
				}
				ev["id"] = float64(n)
			case "data":
				var data any
				if err := json.Unmarshal([]byte(v), &data); err != nil {
					return nil, fmt.Errorf("event data %q: %w", v, err)
				}
				ev["data"] = data
			}
		}
		if _, ok := ev["data"]; ok {
			events = append(events, ev)
		}
	}
	return events, nil
}

// TestOpenAPIDocIsCurrent: docs/openapi.json, the API reference a clone
// reads without running anything, is exactly what `gateway openapi`
// prints. After an API change: go test ./cmd/gateway -run OpenAPIDoc -update
func TestOpenAPIDocIsCurrent(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := realMain(context.Background(), []string{"openapi"}, envOf(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "openapi.json")
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("docs/openapi.json is stale: run go test ./cmd/gateway -run OpenAPIDoc -update")
	}
	var doc struct {
		OpenAPI string
		Paths   map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" || len(doc.Paths) < 15 {
		t.Errorf("gateway openapi printed %d paths of OpenAPI %q (%v)", len(doc.Paths), doc.OpenAPI, err)
	}
}
