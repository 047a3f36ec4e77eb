package openapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/workflow"
)

// yamlNode decodes a YAML section for ConfigFromYAML.
func yamlNode(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// waitFor polls cond until it holds or 10s pass (no timing assertion: the
// deadline only keeps a broken build from hanging).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A URL document is fetched at start and on every refresh; a failed fetch
// keeps the last good document's actions and shows as degraded, and the
// next good fetch mounts the new document.
func TestRefreshKeepsLastGoodDocument(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(ticketsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var state atomic.Int32 // 0 serves doc, 1 fails, 2 serves doc without createTicket
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch state.Load() {
		case 1:
			http.Error(w, "down", http.StatusServiceUnavailable)
		case 2:
			_, _ = io.WriteString(w, strings.Replace(string(doc), "operationId: createTicket", "operationId: openTicket", 1))
		default:
			_, _ = w.Write(doc)
		}
	}))
	defer srv.Close()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: srv.URL + "/openapi.yaml", BaseURL: srv.URL, Refresh: 10 * time.Millisecond}}}, srv.Client())
	if got := f.m.Status()["openapi.tickets"]; got != "ok" {
		t.Fatalf("status after Load = %q", got)
	}
	state.Store(1)
	f.m.Start(context.Background())
	waitFor(t, "a degraded status", func() bool { return f.m.Status()["openapi.tickets"] != "ok" })
	if got := f.m.Status()["openapi.tickets"]; !strings.Contains(got, "503 Service Unavailable") || !strings.Contains(got, "serving the last good document") {
		t.Errorf("status = %q", got)
	}
	if _, ok := f.reg.Action("tickets.createTicket"); !ok {
		t.Error("the last good document's action is gone")
	}
	state.Store(2)
	waitFor(t, "the new document", func() bool { _, ok := f.reg.Action("tickets.openTicket"); return ok })
	waitFor(t, "status ok", func() bool { return f.m.Status()["openapi.tickets"] == "ok" })
	if _, ok := f.reg.Action("tickets.createTicket"); ok {
		t.Error("the old document's action is still mounted")
	}
}

// A URL that cannot be fetched at start does not stop the gateway: the
// source is degraded, without actions, until a fetch succeeds.
func TestUnreachableAtStartIsDegraded(t *testing.T) {
	t.Parallel()
	doc, _ := os.ReadFile(ticketsDoc)
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	f, err := tryMount(t, Config{Sources: []SourceConfig{{Name: "tickets", Spec: srv.URL, BaseURL: srv.URL, Refresh: 10 * time.Millisecond}}}, srv.Client())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := f.m.Status()["openapi.tickets"]; !strings.Contains(got, "cannot fetch the document") {
		t.Errorf("status = %q", got)
	}
	if len(names(f.reg)) != 0 {
		t.Errorf("actions = %v, want none yet", names(f.reg))
	}
	up.Store(true)
	f.m.Start(context.Background())
	waitFor(t, "the document", func() bool { _, ok := f.reg.Action("tickets.getTicket"); return ok })
}

// A token in the spec URL's query (or user information) is never shown:
// the degraded status reaches /readyz, which answers without a token, and
// the log.
func TestSpecURLTokenNotShown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	for _, spec := range []string{
		srv.URL + "/openapi.json?api_key=s3cret-token",          // a reply that is not 2xx
		"http://user:s3cret-token@127.0.0.1:1/openapi.json?x=1", // a refused connection
	} {
		f, err := tryMount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: spec, BaseURL: srv.URL}}}, srv.Client())
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		status := f.m.Status()["openapi.crm"]
		if !strings.Contains(status, "cannot fetch the document") || !strings.Contains(status, "/openapi.json?…") {
			t.Errorf("status = %q", status)
		}
		if strings.Contains(status, "s3cret") || strings.Contains(f.log.String(), "s3cret") {
			t.Errorf("the token is shown: status %q, log %s", status, f.log)
		}
	}
}

// A URL document without baseURL keeps the origin of its first server as
// first loaded: a refresh whose servers[0] names another origin is
// refused — the source is degraded and the change logged — and calls
// (with the connection's Authorization header) still go to the first
// origin only.
func TestRefreshCannotMoveTheOrigin(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"7"}`)
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer other.Close()
	docFor := func(server string) string {
		return `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "` + server + `"}]
paths:
  /tickets/{id}:
    get:
      operationId: getTicket
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`
	}
	var moved atomic.Bool
	spec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if moved.Load() {
			_, _ = io.WriteString(w, docFor(strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/elsewhere"))
			return
		}
		_, _ = io.WriteString(w, docFor(api.URL+"/api"))
	}))
	defer spec.Close()
	f := mount(t, Config{Sources: []SourceConfig{{Name: "crm", Spec: spec.URL, Headers: map[string]string{"Authorization": "Bearer crm-secret-0123456789"},
		Refresh: 10 * time.Millisecond}}}, nil)
	moved.Store(true)
	f.m.Start(context.Background())
	waitFor(t, "a degraded status", func() bool { return f.m.Status()["openapi.crm"] != "ok" })
	if got := f.m.Status()["openapi.crm"]; !strings.Contains(got, "moved from "+api.URL) || !strings.Contains(got, "serving the last good document") {
		t.Errorf("status = %q, want the moved origin named", got)
	}
	if !strings.Contains(f.log.String(), "moved from") {
		t.Errorf("the move is not logged: %s", f.log)
	}
	if _, err := f.reg.Execute(context.Background(), workflow.ActionCall{
		Action: "crm.getTicket", UserID: "alice", WorkflowID: "w", Round: 1, Step: 1, Parameters: map[string]any{"id": "7"}}); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the new origin got %d calls", n)
	}
}
