package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/workflow"
)

// ticketsDoc is the document the end-to-end test serves with Prism.
const ticketsDoc = "../../test/testdata/tickets-openapi.yaml"

// syncBuffer is a log sink safe for the manager's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a registry with one openapiActions source mounted.
type fixture struct {
	reg *actions.Registry
	m   *Manager
	log *syncBuffer
}

// mount loads cfg's sources into a new registry whose HTTP client is
// client; it fails the test when Load fails.
func mount(t *testing.T, cfg Config, client *http.Client) fixture {
	t.Helper()
	f, err := tryMount(t, cfg, client)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return f
}

func tryMount(t *testing.T, cfg Config, client *http.Client) (fixture, error) {
	t.Helper()
	log := &syncBuffer{}
	logger := zerolog.New(log)
	reg, err := actions.New(actions.Config{}, nil, actions.WithHTTPClient(client),
		actions.WithSecrets(cfg.Secrets()...), actions.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	m := New(cfg, reg, Options{Logger: logger, Client: client})
	t.Cleanup(func() { _ = m.Close() })
	return fixture{reg: reg, m: m, log: log}, m.Load(context.Background())
}

// writeDoc writes a document into a temporary folder and returns its path.
func writeDoc(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// schemaOf returns an action's parameters schema decoded.
func schemaOf(t *testing.T, reg *actions.Registry, name string) map[string]any {
	t.Helper()
	spec, ok := reg.Action(name)
	if !ok {
		t.Fatalf("action %s is not registered; have %v", name, names(reg))
	}
	var out map[string]any
	if err := json.Unmarshal(spec.Parameters, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func names(reg *actions.Registry) []string {
	var out []string
	for _, s := range reg.Actions() {
		if s.Server != "" {
			out = append(out, s.Name)
		}
	}
	return out
}

func TestTicketsDocumentBecomesActions(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: ticketsDoc, BaseURL: "http://127.0.0.1:1"}}}, nil)
	want := []string{"tickets.createTicket", "tickets.getTicket", "tickets.listTickets"}
	if diff := cmp.Diff(want, names(f.reg)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !strings.Contains(f.log.String(), "attachFile (POST /tickets/{ticketId}/attachments) skipped: its request body is application/octet-stream, not JSON") {
		t.Errorf("log has no warning naming the skipped operation:\n%s", f.log.String())
	}
	get, _ := f.reg.Action("tickets.getTicket")
	list, _ := f.reg.Action("tickets.listTickets")
	create, _ := f.reg.Action("tickets.createTicket")
	got := []string{
		string(get.Effect), get.HTTPMethod, get.HTTPPath, get.Server, get.Description,
		string(list.Effect), list.Description, string(create.Effect), create.HTTPMethod,
	}
	wantSpec := []string{
		"read", "GET", "/tickets/{ticketId}", "tickets", "Read one ticket",
		"read", "List tickets\n\nLists the tickets, filtered by status and assignee.", "write", "POST",
	}
	if diff := cmp.Diff(wantSpec, got); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
}

// Path parameters (from a path item's $ref'd parameter), query parameters
// (one through a schema $ref) and the JSON body (through a $ref whose
// allOf holds another $ref) are one schema with every $ref inlined.
func TestSchemaPerLocationAndRefChains(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: ticketsDoc, BaseURL: "http://127.0.0.1:1"}}}, nil)
	get := schemaOf(t, f.reg, "tickets.getTicket")
	wantGet := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"ticketId"},
		"properties": map[string]any{
			"ticketId": map[string]any{"type": "integer", "minimum": 1.0, "description": "The ticket's number."},
		},
	}
	if diff := cmp.Diff(wantGet, get); diff != "" {
		t.Errorf("getTicket schema (-want +got):\n%s", diff)
	}
	list := schemaOf(t, f.reg, "tickets.listTickets")
	status := list["properties"].(map[string]any)["status"]
	wantStatus := map[string]any{"type": "string", "enum": []any{"open", "pending", "closed"}, "description": "Only tickets in this status."}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Errorf("listTickets status (-want +got):\n%s", diff)
	}
	if list["required"] != nil {
		t.Errorf("listTickets required = %v, want none", list["required"])
	}
	create := schemaOf(t, f.reg, "tickets.createTicket")
	if diff := cmp.Diff([]any{"body"}, create["required"]); diff != "" {
		t.Errorf("createTicket required (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(create)
	if strings.Contains(string(raw), "$ref") {
		t.Errorf("createTicket schema still has a $ref: %s", raw)
	}
	body := create["properties"].(map[string]any)["body"].(map[string]any)
	if diff := cmp.Diff([]any{"title"}, body["required"]); diff != "" {
		t.Errorf("body required (-want +got):\n%s", diff)
	}
	// The same validator as every action checks the inlined schema.
	if lines := f.reg.ValidateParameters("tickets.createTicket", map[string]any{"body": map[string]any{"title": ""}}); len(lines) == 0 {
		t.Error("an empty title passed validation")
	}
	if lines := f.reg.ValidateParameters("tickets.getTicket", map[string]any{"ticketId": 0}); len(lines) == 0 {
		t.Error("ticketId 0 passed minimum 1")
	}
}

const headerDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /items/{id}/notes:
    put:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: X-Request-Tag, in: header, required: true, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: q, in: query, schema: {type: integer, nullable: true, maximum: 10, exclusiveMaximum: true}}
      requestBody:
        content:
          application/merge-patch+json:
            schema: {type: object, properties: {text: {type: string}}}
      responses: {'200': {description: ok}}
`

// An operation without an id is named <method>_<path words>; header
// parameters are sent by name (Authorization is the gateway's), an
// optional cookie parameter is left out, 3.0's nullable and boolean
// exclusiveMaximum become JSON Schema 2020-12.
func TestOperationWithoutIDAndHeaderParameters(t *testing.T) {
	t.Parallel()
	var got *http.Request
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	defer srv.Close()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "items", Spec: writeDoc(t, headerDoc), BaseURL: srv.URL + "/v1"}}}, srv.Client())
	schema := schemaOf(t, f.reg, "items.put_items_id_notes")
	props := schema["properties"].(map[string]any)
	if diff := cmp.Diff([]string{"X-Request-Tag", "body", "id", "q"}, slices.Sorted(maps.Keys(props))); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	wantQ := map[string]any{"type": []any{"integer", "null"}, "exclusiveMaximum": 10.0}
	if diff := cmp.Diff(wantQ, props["q"]); diff != "" {
		t.Errorf("q (-want +got):\n%s", diff)
	}
	res, err := f.reg.Execute(context.Background(), workflow.ActionCall{
		Action: "items.put_items_id_notes", UserID: "alice", WorkflowID: "w1", Round: 1, Step: 1, FencingToken: 7,
		Parameters: map[string]any{"id": "a b", "X-Request-Tag": "t-1", "q": 3, "body": map[string]any{"text": "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `{"ok":true}` {
		t.Errorf("Text = %q", res.Text)
	}
	if got.Method != "PUT" || got.URL.EscapedPath() != "/v1/items/a%20b/notes" || got.URL.RawQuery != "q=3" ||
		got.Header.Get("X-Request-Tag") != "t-1" || gotBody != `{"text":"hi"}` || got.Header.Get("Content-Type") != "application/json" ||
		got.Header.Get("Idempotency-Key") != workflow.StepKey("w1", 1, 1) || got.Header.Get("X-Fencing-Token") != "7" {
		t.Errorf("request = %s %s?%s tag %q body %q", got.Method, got.URL.EscapedPath(), got.URL.RawQuery, got.Header.Get("X-Request-Tag"), gotBody)
	}
}

const nonJSONDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /upload:
    post:
      operationId: upload
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: {type: object, properties: {file: {type: string, format: binary}}}
      responses: {'204': {description: ok}}
  /ping:
    get:
      operationId: ping
      responses: {'200': {description: ok}}
`

func TestNonJSONBodySkippedWithWarning(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "files", Spec: writeDoc(t, nonJSONDoc), BaseURL: "http://127.0.0.1:1"}}}, nil)
	if diff := cmp.Diff([]string{"files.ping"}, names(f.reg)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !strings.Contains(f.log.String(), "files: operation upload (POST /upload) skipped: its request body is multipart/form-data, not JSON") {
		t.Errorf("log:\n%s", f.log.String())
	}
}

const doc31 = `openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:1/api"}]
paths:
  /people:
    post:
      operationId: addPerson
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Person'}
      responses: {'201': {description: ok}}
components:
  schemas:
    Person:
      type: object
      required: [name, nickname]
      properties:
        name: {type: string}
        nickname: {type: [string, "null"]}
        age: {type: integer, exclusiveMinimum: 0}
`

func TestOpenAPI31NullableType(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "people", Spec: writeDoc(t, doc31)}}}, nil)
	body := schemaOf(t, f.reg, "people.addPerson")["properties"].(map[string]any)["body"].(map[string]any)
	props := body["properties"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"type": []any{"string", "null"}}, props["nickname"]); diff != "" {
		t.Errorf("nickname (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"type": "integer", "exclusiveMinimum": 0.0}, props["age"]); diff != "" {
		t.Errorf("age (-want +got):\n%s", diff)
	}
	tests := []struct {
		nickname any
		age      any
		valid    bool
	}{
		{nil, 3, true}, {"Bob", 3, true}, {42, 3, false}, {"Bob", 0, false},
	}
	for _, tt := range tests {
		lines := f.reg.ValidateParameters("people.addPerson", map[string]any{"body": map[string]any{"name": "Ann", "nickname": tt.nickname, "age": tt.age}})
		if (len(lines) == 0) != tt.valid {
			t.Errorf("nickname %v age %v: problems %v, want valid %v", tt.nickname, tt.age, lines, tt.valid)
		}
	}
	// The document's first server is the base URL.
	spec, _ := f.reg.Action("people.addPerson")
	if spec.HTTPPath != "/people" {
		t.Errorf("HTTPPath = %q", spec.HTTPPath)
	}
}

// A secret header reaches the service but never the action's schema or
// description (what prompts show), its result or error (what traces and
// messages keep) or the log.
func TestSecretHeaderNeverLeaves(t *testing.T) {
	t.Parallel()
	const secret = "tickets-token-5f2c9a81d3"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if r.URL.Path == "/tickets/2" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"title": "Forbidden", "detail": "`+auth+` may not read ticket 2"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": 1, "echo": "`+auth+`"}`)
	}))
	defer srv.Close()
	cfg, err := ConfigFromYAML(yamlNode(t, `
- name: tickets
  spec: `+ticketsDoc+`
  baseURL: `+srv.URL+`
  headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}
`), "", func(k string) (string, bool) { return secret, k == "TICKETS_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	f := mount(t, cfg, srv.Client())
	call := func(id int) (workflow.ActionResult, error) {
		return f.reg.Execute(context.Background(), workflow.ActionCall{
			Action: "tickets.getTicket", UserID: "alice", WorkflowID: "w", Round: 1, Step: id,
			Parameters: map[string]any{"ticketId": id},
		})
	}
	res, err := call(1)
	if err != nil {
		t.Fatal(err)
	}
	_, failed := call(2)
	if failed == nil || !strings.Contains(workflow.PublicMessage(failed), "HTTP 403 from tickets.getTicket: Forbidden: ") {
		t.Fatalf("error = %v", failed)
	}
	specs, _ := json.Marshal(f.reg.Actions())
	for what, text := range map[string]string{
		"result": res.Text, "error": workflow.PublicMessage(failed) + failed.Error(), "specs": string(specs), "log": f.log.String(),
	} {
		if strings.Contains(text, secret) {
			t.Errorf("the secret is in the %s: %s", what, text)
		}
	}
	if !strings.Contains(res.Text, `"echo":"[REDACTED]"`) && !strings.Contains(res.Text, `"echo":"Bearer [REDACTED]"`) {
		t.Errorf("result = %s, want the echoed credential redacted", res.Text)
	}
}

func TestRedirectToAnotherHostRefused(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host was called: %s", r.URL)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer srv.Close()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: ticketsDoc, BaseURL: srv.URL}}}, srv.Client())
	_, err := f.reg.Execute(context.Background(), workflow.ActionCall{
		Action: "tickets.getTicket", UserID: "alice", WorkflowID: "w", Round: 1, Step: 1,
		Parameters: map[string]any{"ticketId": 7},
	})
	if err == nil || !strings.Contains(workflow.PublicMessage(err), "a redirect to http://"+strings.TrimPrefix(other.URL, "http://")+"/steal leaves") {
		t.Errorf("error = %v, want the redirect refused", err)
	}
}

// Problems of documents are reported by Load, every source's at once.
func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	cfg := Config{Sources: []SourceConfig{
		{Name: "a", Spec: filepath.Join(t.TempDir(), "missing.yaml"), BaseURL: "http://127.0.0.1:1"},
		{Name: "b", Spec: writeDoc(t, "openapi: 3.0.3\ninfo: {title: t}\npaths: {}\n"), BaseURL: "http://127.0.0.1:1"},
		{Name: "c", Spec: ticketsDoc, BaseURL: "http://127.0.0.1:1", Include: []string{"getTicket", "deleteTicket"}},
		{Name: "d", Spec: writeDoc(t, nonJSONDoc)},
	}}
	_, err := tryMount(t, cfg, nil)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, want := range []string{
		"openapiActions a: open ", "missing.yaml: no such file",
		"openapiActions b: ", "is not a valid OpenAPI document",
		`openapiActions c: include names "deleteTicket", which is no operation of the document`,
		"openapiActions d: the document lists no server: set baseURL",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestIncludeAndEffects(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{
		Name: "tickets", Spec: ticketsDoc, BaseURL: "http://127.0.0.1:1",
		Include: []string{"listTickets", "createTicket"}, Effects: map[string]workflow.Effect{"listTickets": workflow.EffectWrite},
	}}}, nil)
	if diff := cmp.Diff([]string{"tickets.createTicket", "tickets.listTickets"}, names(f.reg)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if e := f.reg.EffectOf("tickets.listTickets", nil); e != workflow.EffectWrite {
		t.Errorf("listTickets effect = %s, want the override write", e)
	}
}

func TestActionPart(t *testing.T) {
	t.Parallel()
	tests := []struct{ id, method, path, want string }{
		{"getTicket", "GET", "/t", "getTicket"},
		{"Get-Ticket.v2", "GET", "/t", "get_Ticket_v2"},
		{"2fa", "POST", "/t", "op_2fa"},
		{"", "GET", "/tickets/{ticketId}/comments", "get_tickets_ticketId_comments"},
		{"", "DELETE", "/", "delete"},
	}
	for _, tt := range tests {
		if got := actionPart(tt.id, tt.method, tt.path); got != tt.want {
			t.Errorf("actionPart(%q, %s %s) = %q, want %q", tt.id, tt.method, tt.path, got, tt.want)
		}
	}
}

func TestConfigProblems(t *testing.T) {
	t.Parallel()
	_, err := ConfigFromYAML(yamlNode(t, `
- name: Bad-Name
  spec: ""
- name: ok
  spec: https://
  baseURL: ftp://x
  effects: {a: delete}
  refresh: 1m
  bogus: 1
`), "", nil)
	if err == nil {
		t.Fatal("no problem reported")
	}
	for _, want := range []string{`name "Bad-Name"`, "spec (a file path or an http(s) URL) is required",
		`spec "https://" is not a usable URL`, `baseURL "ftp://x"`, `effects.a "delete"`, "field bogus not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	cfg, err := ConfigFromYAML(yamlNode(t, "- {name: crm, spec: crm.yaml}\n"), "/etc/twostep", nil)
	if err != nil || cfg.Sources[0].Spec != "/etc/twostep/crm.yaml" || !slices.Equal(cfg.Names(), []string{"crm"}) {
		t.Errorf("relative spec = %+v, %v", cfg, err)
	}
}

// Approval rules may name a source's operations: checked once its
// document is loaded, accepted while it is not.
func TestApprovalRulesNameOperations(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: ticketsDoc, BaseURL: "http://127.0.0.1:1"}}}, nil)
	rules := approval.Config{Actions: map[string]string{"tickets.listTickets": approval.Always}}
	a, err := approval.New(rules, f.reg, nil, []string{"tickets"})
	if err != nil {
		t.Fatal(err)
	}
	if wait, _ := a.NeedsApproval("tickets.listTickets", nil); !wait {
		t.Error("listTickets does not wait for approval under rule always")
	}
	if wait, effect := a.NeedsApproval("tickets.createTicket", nil); !wait || effect != workflow.EffectWrite {
		t.Errorf("createTicket: wait %v effect %s, want a write that waits", wait, effect)
	}
	bad := approval.Config{Actions: map[string]string{"tickets.deleteTicket": approval.Never}}
	if _, err := approval.New(bad, f.reg, nil, []string{"tickets"}); err == nil {
		t.Error("a rule naming no operation of a loaded document was accepted")
	}
	empty, _ := actions.New(actions.Config{}, nil)
	if _, err := approval.New(bad, empty, nil, []string{"tickets"}); err != nil {
		t.Errorf("a rule of a source not loaded yet was refused: %v", err)
	}
}

const refChainDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /orders:
    parameters:
      - $ref: '#/components/parameters/Region'
    post:
      operationId: placeOrder
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Order'}
      responses: {'201': {description: ok}}
components:
  parameters:
    Region:
      $ref: '#/components/parameters/RegionParam'
    RegionParam:
      name: region
      in: query
      required: true
      schema: {$ref: '#/components/schemas/RegionCode'}
  schemas:
    RegionCode: {$ref: '#/components/schemas/Code'}
    Code: {type: string, pattern: '^[A-Z]{2}$'}
    Order:
      type: object
      required: [lines]
      properties:
        lines:
          type: array
          items: {$ref: '#/components/schemas/Line'}
    Line:
      type: object
      properties:
        sku: {$ref: '#/components/schemas/Code'}
        quantity: {type: integer, minimum: 1}
`

// $ref chains — a parameter $ref to a $ref, a schema $ref to a $ref, a
// body whose array items are a $ref holding a $ref — are inlined whole.
func TestRefChainsInlined(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "shop", Spec: writeDoc(t, refChainDoc), BaseURL: "http://127.0.0.1:1"}}}, nil)
	got := schemaOf(t, f.reg, "shop.placeOrder")
	code := map[string]any{"type": "string", "pattern": "^[A-Z]{2}$"}
	want := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"region", "body"},
		"properties": map[string]any{
			"region": code,
			"body": map[string]any{
				"type": "object", "required": []any{"lines"},
				"properties": map[string]any{"lines": map[string]any{
					"type": "array",
					"items": map[string]any{"type": "object", "properties": map[string]any{
						"sku": code, "quantity": map[string]any{"type": "integer", "minimum": 1.0},
					}},
				}},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	bad := map[string]any{"region": "EU", "body": map[string]any{"lines": []any{map[string]any{"sku": "abc", "quantity": 1}}}}
	if lines := f.reg.ValidateParameters("shop.placeOrder", bad); len(lines) != 1 || !strings.HasPrefix(lines[0], "/body/lines/0/sku") {
		t.Errorf("problems = %v, want one at /body/lines/0/sku", lines)
	}
}

const recursiveDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /nodes:
    post:
      operationId: addNode
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Node'}
      responses: {'201': {description: ok}}
    get:
      operationId: listNodes
      responses: {'200': {description: ok}}
components:
  schemas:
    Node:
      type: object
      properties:
        children: {type: array, items: {$ref: '#/components/schemas/Node'}}
`

func TestRecursiveSchemaSkipped(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tree", Spec: writeDoc(t, recursiveDoc), BaseURL: "http://127.0.0.1:1"}}}, nil)
	if diff := cmp.Diff([]string{"tree.listNodes"}, names(f.reg)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !strings.Contains(f.log.String(), "tree: operation addNode (POST /nodes) skipped: request body (application/json): its schema is recursive") {
		t.Errorf("log:\n%s", f.log.String())
	}
}

// connection: adds the caller's connection headers; a caller without that
// connection gets a failed step saying so, and nothing is sent.
func TestCallerConnectionHeaders(t *testing.T) {
	t.Parallel()
	var auth []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": 1}`)
	}))
	defer srv.Close()
	reg, err := actions.New(actions.Config{Connections: []actions.ConnectionConfig{{
		User: "alice", Label: "crm", BaseURL: "https://crm.example.test",
		Headers: map[string]string{"Authorization": "Bearer alice-crm-token-123"},
	}}}, nil, actions.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Sources: []SourceConfig{{Name: "tickets", Spec: ticketsDoc, BaseURL: srv.URL, Connection: "crm"}}}, reg, Options{})
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := func(user string) error {
		_, err := reg.Execute(context.Background(), workflow.ActionCall{
			Action: "tickets.getTicket", UserID: user, WorkflowID: "w", Round: 1, Step: 1, Parameters: map[string]any{"ticketId": 1},
		})
		return err
	}
	if err := run("alice"); err != nil {
		t.Fatal(err)
	}
	err = run("bob")
	if err == nil || !strings.Contains(workflow.PublicMessage(err), `tickets.getTicket needs your connection "crm"`) {
		t.Errorf("bob's call: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(auth, []string{"Bearer alice-crm-token-123"}) {
		t.Errorf("Authorization headers sent = %q, want alice's only", auth)
	}
}

// A file document may $ref its neighbouring files, never a URL: the
// loader's default reader would fetch it with no timeout, no size cap and
// no cancellation, and a ref that never answers would hang the start.
func TestFileDocumentRefersToNoURL(t *testing.T) {
	t.Parallel()
	var fetched sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Lock()
		hits++
		fetched.Unlock()
		_, _ = io.WriteString(w, "Ticket: {type: object, properties: {id: {type: string}}}\n")
	}))
	defer srv.Close()
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /tickets:
    post:
      operationId: createTicket
      requestBody:
        content:
          application/json:
            schema: {$ref: "` + srv.URL + `/schemas.yaml#/Ticket"}
      responses: {"200": {description: ok}}
`
	_, err := tryMount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: writeDoc(t, doc), BaseURL: "http://127.0.0.1:1"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "openapiActions crm: ") {
		t.Errorf("Load: %v, want the document refused", err)
	}
	fetched.Lock()
	defer fetched.Unlock()
	if hits != 0 {
		t.Errorf("the ref's URL was fetched %d time(s)", hits)
	}
}

// A $ref to a neighbouring file still loads.
func TestFileDocumentRefersToNeighbour(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "schemas.yaml"), []byte("Ticket: {type: object, properties: {id: {type: string}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /tickets:
    post:
      operationId: createTicket
      requestBody:
        content:
          application/json:
            schema: {$ref: "schemas.yaml#/Ticket"}
      responses: {"200": {description: ok}}
`
	p := filepath.Join(dir, "doc.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f := mount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: p, BaseURL: "http://127.0.0.1:1"}}}, nil)
	body, _ := schemaOf(t, f.reg, "crm.createTicket")["properties"].(map[string]any)["body"].(map[string]any)
	if _, ok := body["properties"].(map[string]any)["id"]; !ok {
		t.Errorf("the neighbour's schema is not inlined: %v", body)
	}
}

const reservedNamesDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /plain:
    get:
      operationId: plain
      parameters: [{name: Documents, in: query, schema: {type: string}}]
      responses: {'200': {description: ok}}
  /lookalike:
    get:
      operationId: lookalike
      parameters: [{name: "docum\u0435nts", in: query, schema: {type: string}}]
      responses: {'200': {description: ok}}
  /fullwidth:
    get:
      operationId: fullwidth
      parameters: [{name: "\uff48istory", in: query, schema: {type: string}}]
      responses: {'200': {description: ok}}
  /ping:
    get:
      operationId: ping
      responses: {'200': {description: ok}}
`

// A parameter named as a forbidden field — in another case, with a
// Cyrillic look-alike letter or full-width — skips its operation with the
// same clear message: the one rule (workflow.IsForbiddenField) decides.
func TestReservedParameterNamesSkipped(t *testing.T) {
	t.Parallel()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "r", Spec: writeDoc(t, reservedNamesDoc), BaseURL: "http://127.0.0.1:1"}}}, nil)
	if diff := cmp.Diff([]string{"r.ping"}, names(f.reg)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		`r: operation plain (GET /plain) skipped: parameter \"Documents\" has a name reserved by the gateway`,
		`r: operation lookalike (GET /lookalike) skipped: parameter \"documеnts\" has a name reserved by the gateway`,
		`r: operation fullwidth (GET /fullwidth) skipped: parameter \"ｈistory\" has a name reserved by the gateway`,
	} {
		if !strings.Contains(f.log.String(), want) { // the log is JSON: quotes escaped
			t.Errorf("log lacks %q:\n%s", want, f.log.String())
		}
	}
}

// A header parameter's value the model wrote with a line break or another
// control character is a correctable step failure (KindInvalid, naming
// the parameter), found before anything is sent — not a transport error.
func TestHeaderValueWithLineBreakIsInvalid(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	defer srv.Close()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "items", Spec: writeDoc(t, headerDoc), BaseURL: srv.URL + "/v1"}}}, srv.Client())
	for _, tag := range []string{"t-1\r\nX-Evil: 1", "t-1\nmore", "t\x00", "t\x7f"} {
		_, err := f.reg.Execute(context.Background(), workflow.ActionCall{
			Action: "items.put_items_id_notes", UserID: "alice", WorkflowID: "w1", Round: 1, Step: 1,
			Parameters: map[string]any{"id": "a", "X-Request-Tag": tag, "body": map[string]any{"text": "hi"}},
		})
		if workflow.KindOf(err) != workflow.KindInvalid || err == nil || !strings.Contains(err.Error(), "X-Request-Tag") {
			t.Errorf("tag %q: Execute = %v (kind %s), want an invalid-parameter failure naming X-Request-Tag", tag, err, workflow.KindOf(err))
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the service got %d requests, want none", n)
	}
}
