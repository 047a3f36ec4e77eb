package actions

import (
	"context"
	"strconv"
	"testing"

	"github.com/twostep/twostep/workflow"
)

func BenchmarkValidateParameters(b *testing.B) {
	r, err := New(Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	params := map[string]any{"method": "POST", "path": "/orders", "query": map[string]any{"limit": 5.0}, "body": map[string]any{"sku": "A1"}}
	for b.Loop() {
		if lines := r.ValidateParameters(HTTPRequestAction, params); lines != nil {
			b.Fatal(lines)
		}
	}
}

func BenchmarkExecuteHTTPRequest(b *testing.B) {
	srv := newRecorder(b, answer(200, "application/json", `{"id":42}`))
	r, err := New(Config{Connections: []ConnectionConfig{{
		User: "alice", Label: "crm", Kind: "http", BaseURL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer benchmark-token"},
	}}}, nil, WithHTTPClient(srv.Client()))
	if err != nil {
		b.Fatal(err)
	}
	c := crmCall(map[string]any{"path": "/customers/42"})
	for b.Loop() {
		if _, err := r.Execute(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActions lists the actions as every Stage 1 does: the built-ins
// alone, then with 60 MCP tools mounted (one per-user server among them).
func BenchmarkActions(b *testing.B) {
	r, err := New(Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("builtins", func(b *testing.B) {
		for b.Loop() {
			if len(r.ForUser("alice").Actions()) == 0 {
				b.Fatal("no actions")
			}
		}
	})
	for s, user := range map[string]string{"shared": "", "own": "alice", "other": "bob"} {
		var list []ExternalAction
		for i := range 20 {
			list = append(list, echoExternal("mcp."+s+".tool"+strconv.Itoa(i), user, workflow.EffectRead))
		}
		r.SetExternal(s, list)
	}
	b.Run("with 60 MCP tools", func(b *testing.B) {
		for b.Loop() {
			if n := len(r.ForUser("alice").Actions()); n < 40 {
				b.Fatal(n)
			}
		}
	})
}
