package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// twoUsersConfig gives alice two connections and bob one; erp-test leaves
// its kind to the default.
func twoUsersConfig() Config {
	return Config{Connections: []ConnectionConfig{
		{User: "alice", Label: "erp-test", BaseURL: "http://127.0.0.1:1/erp", Description: "test ERP"},
		{User: "alice", Label: "crm", Kind: "http", BaseURL: "http://127.0.0.1:1/crm", Description: "CRM",
			Headers: map[string]string{"Authorization": "Bearer alice-token"}},
		{User: "bob", Label: "crm", Kind: "http", BaseURL: "http://127.0.0.1:1/bobcrm", Description: "Bob's CRM"},
	}}
}

func TestActionsListedSortedWithSpecs(t *testing.T) {
	t.Parallel()
	cfg := Config{HTTPActions: []HTTPActionConfig{{
		Name: "crm.lookup", Description: "Look a customer up", URL: "http://127.0.0.1:1/lookup",
	}}}
	r := mustNew(t, cfg, answering("x"))
	var names []string
	for _, s := range r.Actions() {
		names = append(names, s.Name)
		var schema map[string]any
		if err := json.Unmarshal(s.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: parameters %s is not an object schema (%v)", s.Name, s.Parameters, err)
		}
	}
	want := []string{"ai.process", "crm.lookup", "document.extract", "document.generate", "http.request", "workflow.complete"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Actions() names (-want +got):\n%s", diff)
	}
	tests := []struct {
		name     string
		effect   workflow.Effect
		docs     workflow.DocumentNeed
		connKind string
		connReq  bool
	}{
		{"ai.process", workflow.EffectRead, workflow.DocumentsOptional, "", false},
		{"document.extract", workflow.EffectRead, workflow.DocumentsRequired, "", false},
		{"document.generate", workflow.EffectRead, workflow.DocumentsNone, "", false},
		{"http.request", workflow.EffectWrite, workflow.DocumentsNone, "http", true},
		{"workflow.complete", workflow.EffectRead, workflow.DocumentsNone, "", false},
		{"crm.lookup", workflow.EffectWrite, workflow.DocumentsOptional, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := r.Action(tt.name)
			if !ok {
				t.Fatal("not registered")
			}
			if s.Effect != tt.effect || s.Documents != tt.docs || s.ConnectionKind != tt.connKind || s.ConnectionRequired != tt.connReq {
				t.Errorf("spec = %+v", s)
			}
			if s.Description == "" {
				t.Error("no description")
			}
		})
	}
}

func TestNoModelNoAIProcess(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	if _, ok := r.Action(AIProcessAction); ok {
		t.Error("ai.process registered without a model")
	}
}

func TestValidateParametersLines(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, answering("x"))
	tests := []struct {
		name   string
		action string
		params map[string]any
	}{
		{"valid", "ai.process", map[string]any{"aiPrompt": "summarise"}},
		{"missing required", "ai.process", map[string]any{}},
		{"wrong type and unknown", "ai.process", map[string]any{"aiPrompt": 3.0, "temperature": 0.2}},
		{"forbidden key", "document.generate", map[string]any{"fileName": "a.md", "content": "x", "documentList": []any{"docList:x"}}},
		{"enum", "http.request", map[string]any{"method": "TRACE", "path": "/x"}},
		{"nested", "http.request", map[string]any{"path": "/x", "query": map[string]any{"limit": []any{1.0}}}},
		{"path leaves the base URL, GET with body", "http.request", map[string]any{"path": "http://169.254.169.254/", "body": "x"}},
		{"encoded dot-dot", "http.request", map[string]any{"method": "POST", "path": "/a/%2e%2e/b", "body": "x"}},
		{"generate rules", "document.generate", map[string]any{"fileName": "..", "content": "{", "mimeType": "application/json"}},
		{"unknown action", "nope.nothing", map[string]any{}},
		{"nil params", "workflow.complete", nil},
	}
	var out strings.Builder
	for _, tt := range tests {
		lines := r.ValidateParameters(tt.action, tt.params)
		out.WriteString("## " + tt.name + " (" + tt.action + ")\n")
		for _, l := range lines {
			out.WriteString(l + "\n")
		}
		if tt.name == "valid" && lines != nil {
			t.Errorf("valid parameters gave %q", lines)
		}
		if tt.name != "valid" && len(lines) == 0 {
			t.Errorf("%s: no problem reported", tt.name)
		}
	}
	golden(t, "validate_parameters.golden", out.String())
}

func TestExecuteRefusals(t *testing.T) {
	t.Parallel()
	r := mustNew(t, twoUsersConfig(), answering("x"))
	conn := func(label string) *workflow.Connection { return &workflow.Connection{Label: label, Kind: "http"} }
	tests := []struct {
		name string
		call workflow.ActionCall
		kind workflow.Kind
		msg  string
	}{
		{"unknown action", call("nope.nothing", nil), workflow.KindNotFound, `unknown action "nope.nothing"`},
		{"invalid parameters", call("document.generate", map[string]any{"fileName": "a"}), workflow.KindInvalid, "/content: required parameter is missing"},
		{"documents required", call("document.extract", nil), workflow.KindInvalid, `action "document.extract" needs input documents`},
		{"connection missing", call("http.request", map[string]any{"path": "/x"}), workflow.KindInvalid, `needs a connection of kind "http"`},
		{"another user's connection", withConn(call("http.request", map[string]any{"path": "/x"}), conn("nobody")), workflow.KindNotFound, `connection "nobody" is not one of yours (available: crm, erp-test)`},
		{"workflow.complete", call("workflow.complete", map[string]any{"message": "done"}), workflow.KindInvalid, "handled by the engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := r.Execute(context.Background(), tt.call)
			wantKind(t, err, tt.kind)
			if !strings.Contains(workflow.PublicMessage(err), tt.msg) {
				t.Errorf("PublicMessage = %q, want it to contain %q", workflow.PublicMessage(err), tt.msg)
			}
		})
	}
	// Bob's "crm" is not Alice's: the label resolves per user.
	bobCall := withConn(call("http.request", map[string]any{"path": "/x"}), conn("erp-test"))
	bobCall.UserID = "bob"
	_, err := r.Execute(context.Background(), bobCall)
	wantKind(t, err, workflow.KindNotFound)
}

func TestConnectionsPerUserSorted(t *testing.T) {
	t.Parallel()
	r := mustNew(t, twoUsersConfig(), nil)
	want := []workflow.Connection{
		{Label: "crm", Kind: "http", Description: "CRM"},
		{Label: "erp-test", Kind: "http", Description: "test ERP"},
	}
	if diff := cmp.Diff(want, r.Connections("alice")); diff != "" {
		t.Errorf("Connections(alice) (-want +got):\n%s", diff)
	}
	if got := r.Connections("carol"); len(got) != 0 {
		t.Errorf("Connections(carol) = %v, want none", got)
	}
}

func TestEffectOf(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	tests := []struct {
		action string
		params map[string]any
		want   workflow.Effect
	}{
		{"http.request", map[string]any{"path": "/x"}, workflow.EffectRead},
		{"http.request", map[string]any{"method": "GET", "path": "/x"}, workflow.EffectRead},
		{"http.request", map[string]any{"method": "DELETE", "path": "/x"}, workflow.EffectWrite},
		{"document.generate", nil, workflow.EffectRead},
		{"unknown.action", nil, workflow.EffectWrite},
	}
	for _, tt := range tests {
		if got := r.EffectOf(tt.action, tt.params); got != tt.want {
			t.Errorf("EffectOf(%s, %v) = %s, want %s", tt.action, tt.params, got, tt.want)
		}
	}
}

func TestExecuteRecoversPanic(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	r.actions["test.panic"] = action{
		spec:   workflow.ActionSpec{Name: "test.panic"},
		schema: mustCompileSchema("test.panic", `{"type": "object"}`),
		run: func(context.Context, invocation) (workflow.ActionResult, error) {
			panic("boom")
		},
	}
	_, err := r.Execute(context.Background(), call("test.panic", nil))
	wantKind(t, err, workflow.KindInternal)
	if !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v, want the panic value in the cause", err)
	}
}

// withConn sets the call's connection.
func withConn(c workflow.ActionCall, conn *workflow.Connection) workflow.ActionCall {
	c.Connection = conn
	return c
}

func TestExecuteLogsOneLinePerCall(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := mustNew(t, Config{}, nil, WithLogger(zerolog.New(&buf)))
	ctx := context.Background()
	if _, err := r.Execute(ctx, call(GenerateAction, map[string]any{"fileName": "a.md", "content": "private text"})); err != nil {
		t.Fatal(err)
	}
	_, _ = r.Execute(ctx, call(GenerateAction, map[string]any{"fileName": "a.md"}))
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		delete(m, "duration")
		lines = append(lines, m)
	}
	want := []map[string]any{
		{"level": "info", "message": "action executed", "action": "document.generate", "workflowId": "wf_1", "round": 2.0, "step": 3.0,
			"connection": "", "idempotencyKey": "wf_1:2:3", "documents": 0.0},
		{"level": "warn", "message": "action executed", "action": "document.generate", "workflowId": "wf_1", "round": 2.0, "step": 3.0,
			"connection": "", "idempotencyKey": "", "documents": 0.0, "kind": "invalid",
			"error": "invalid parameters for document.generate:\n/content: required parameter is missing"},
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if strings.Contains(buf.String(), "private text") {
		t.Error("a parameter value reached the log")
	}
}
