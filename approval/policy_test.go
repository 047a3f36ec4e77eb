package approval

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// TestApprovalsPolicy: by default write effects wait and reads run;
// http.request's effect follows its method; per-action rules override;
// workflow.complete never waits.
func TestApprovalsPolicy(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, true)
	def, err := New(Config{}, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := New(Config{Default: Never, Actions: map[string]string{
		"document.generate": Always, actions.HTTPRequestAction: Write}}, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		policy *Policy
		action string
		params map[string]any
		want   bool
		effect workflow.Effect
	}{
		{def, actions.HTTPRequestAction, map[string]any{"method": "GET"}, false, workflow.EffectRead},
		{def, actions.HTTPRequestAction, map[string]any{"method": "head"}, false, workflow.EffectRead},
		{def, actions.HTTPRequestAction, map[string]any{"method": "POST"}, true, workflow.EffectWrite},
		{def, actions.HTTPRequestAction, map[string]any{"method": "DELETE"}, true, workflow.EffectWrite},
		{def, "document.generate", map[string]any{}, false, workflow.EffectRead},
		{def, workflow.CompleteAction, map[string]any{"message": "x"}, false, r.EffectOf(workflow.CompleteAction, nil)},
		{custom, "document.generate", map[string]any{}, true, workflow.EffectRead},
		{custom, actions.HTTPRequestAction, map[string]any{"method": "PUT"}, true, workflow.EffectWrite},
		{custom, actions.HTTPRequestAction, map[string]any{"method": "GET"}, false, workflow.EffectRead},
		{custom, "ai.process", map[string]any{}, false, r.EffectOf("ai.process", nil)},
	}
	for _, tt := range tests {
		got, effect := tt.policy.NeedsApproval(tt.action, tt.params)
		if got != tt.want || effect != tt.effect {
			t.Errorf("%s %v (default %s) = %v, %s; want %v, %s", tt.action, tt.params, tt.policy.def, got, effect, tt.want, tt.effect)
		}
	}
}

// TestApprovalsConfigIsChecked: unknown actions and rules are refused at
// start, every problem at once.
func TestApprovalsConfigIsChecked(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, true)
	_, err := New(Config{Default: "sometimes", Actions: map[string]string{
		"crm.nope": Always, actions.HTTPRequestAction: "maybe"}}, r, nil, nil)
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Fatalf("err = %v, want KindInvalid", err)
	}
	for _, want := range []string{`approvals.default "sometimes"`, `"crm.nope" is not a registered action`, `approvals.actions.http.request: "maybe"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestApprovalsOfMCPTools: a rule may name an MCP tool before its server
// has listed it; once listed, the tool's declared effect and the rule apply.
func TestApprovalsOfMCPTools(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, false)
	p, err := New(Config{Actions: map[string]string{"mcp.crm.lookup": Always}}, r, []string{"crm"}, nil)
	if err != nil {
		t.Fatalf("a rule for a not yet listed MCP tool was refused: %v", err)
	}
	r.SetExternal("crm", []actions.ExternalAction{
		echoExternal("mcp.crm.lookup", workflow.EffectRead),
		echoExternal("mcp.crm.delete", workflow.EffectWrite),
		echoExternal("mcp.crm.peek", workflow.EffectRead),
	})
	for _, tt := range []struct {
		action string
		want   bool
	}{{"mcp.crm.lookup", true}, {"mcp.crm.delete", true}, {"mcp.crm.peek", false}} {
		if got, _ := p.NeedsApproval(tt.action, nil); got != tt.want {
			t.Errorf("NeedsApproval(%s) = %v, want %v", tt.action, got, tt.want)
		}
	}
}

// TestApprovalsOfMCPToolsNameAConfiguredServer: a rule for an MCP tool not
// listed yet must still be mcp.<server>.<tool> with a configured server, so
// a typo in the server's name is refused at start rather than silently
// never matching.
func TestApprovalsOfMCPToolsNameAConfiguredServer(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, false)
	_, err := New(Config{Actions: map[string]string{
		"mcp.crn.lookup": Always, "mcp.crm": Never, "mcp..x": Never, "mcp.crm.ok": Never,
	}}, r, []string{"crm"}, nil)
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Fatalf("err = %v, want KindInvalid", err)
	}
	for _, want := range []string{
		`"mcp.crn.lookup" names MCP server "crn", which is not in mcpServers`,
		`"mcp.crm" is not an MCP tool name`,
		`"mcp..x" is not an MCP tool name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "mcp.crm.ok") {
		t.Errorf("a well-formed rule of a configured server was refused: %v", err)
	}
}
