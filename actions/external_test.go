package actions

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// echoExternal is an external action named name that echoes its "text"
// parameter (and a secret, to check scrubbing).
func echoExternal(name, user string, effect workflow.Effect) ExternalAction {
	return ExternalAction{
		Spec: workflow.ActionSpec{Name: name, Description: "echo", Effect: effect, Server: "srv"},
		Schema: map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"text": map[string]any{"type": "string"}},
			"required":             []any{"text"},
			"additionalProperties": false,
		},
		User: user,
		Run: func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
			return workflow.ActionResult{Text: call.Parameters["text"].(string) + " s3cr3t-value"}, nil
		},
	}
}

func TestSetExternalAddsValidatesAndRuns(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil, WithSecrets("s3cr3t-value"))
	bad := echoExternal("mcp.srv.bad", "", workflow.EffectRead)
	bad.Schema = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "no-such-type"}}}
	taken := echoExternal(HTTPRequestAction, "", workflow.EffectRead)
	skipped := r.SetExternal("srv", []ExternalAction{echoExternal("mcp.srv.echo", "", workflow.EffectRead), bad, taken})
	if len(skipped) != 2 || skipped["mcp.srv.bad"] == nil || skipped[HTTPRequestAction] == nil {
		t.Fatalf("skipped = %v, want mcp.srv.bad and http.request", skipped)
	}
	spec, ok := r.Action("mcp.srv.echo")
	if !ok || spec.Effect != workflow.EffectRead || spec.Server != "srv" || !strings.Contains(string(spec.Parameters), `"text"`) {
		t.Fatalf("Action = %+v, %v", spec, ok)
	}
	if got := r.ValidateParameters("mcp.srv.echo", map[string]any{"text": 3}); len(got) != 1 || !strings.HasPrefix(got[0], "/text:") {
		t.Errorf("ValidateParameters = %q, want one /text problem", got)
	}
	res, err := r.Execute(context.Background(), workflow.ActionCall{UserID: "u", Action: "mcp.srv.echo", Parameters: map[string]any{"text": "hi"}})
	if err != nil || strings.Contains(res.Text, "s3cr3t-value") || !strings.HasPrefix(res.Text, "hi ") {
		t.Errorf("Execute = %q, %v; want the echo with the secret scrubbed", res.Text, err)
	}
	if _, err := r.Execute(context.Background(), workflow.ActionCall{UserID: "u", Action: "mcp.srv.echo", Parameters: map[string]any{}}); workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("Execute without text: %v, want invalid", err)
	}
	if got := r.EffectOf("mcp.srv.echo", nil); got != workflow.EffectRead {
		t.Errorf("EffectOf = %s", got)
	}

	// Replacing the source's list removes what is no longer there.
	r.SetExternal("srv", []ExternalAction{echoExternal("mcp.srv.other", "", "")})
	if _, ok := r.Action("mcp.srv.echo"); ok {
		t.Error("mcp.srv.echo still listed after the source dropped it")
	}
	if spec, _ := r.Action("mcp.srv.other"); spec.Effect != workflow.EffectWrite {
		t.Errorf("an action without a declared effect has effect %q, want write", spec.Effect)
	}
	r.SetExternal("srv", nil)
	for _, s := range r.Actions() {
		if strings.HasPrefix(s.Name, "mcp.") {
			t.Errorf("%s still listed after the source was emptied", s.Name)
		}
	}
}

func TestExternalPerUser(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	r.SetExternal("mine", []ExternalAction{echoExternal("mcp.mine.echo", "alice", workflow.EffectRead)})
	if _, ok := r.ForUser("bob").Action("mcp.mine.echo"); ok {
		t.Error("bob sees alice's action")
	}
	if _, ok := r.ForUser("alice").Action("mcp.mine.echo"); !ok {
		t.Error("alice does not see her action")
	}
	names := func(specs []workflow.ActionSpec) string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(r.ForUser("bob").Actions()); strings.Contains(got, "mcp.mine") {
		t.Errorf("bob's actions = %s", got)
	}
	if got := names(r.ForUser("alice").Actions()); !strings.Contains(got, "mcp.mine.echo") {
		t.Errorf("alice's actions = %s", got)
	}
	type effects interface {
		EffectOf(string, map[string]any) workflow.Effect
	}
	if got := r.ForUser("alice").(effects).EffectOf("mcp.mine.echo", nil); got != workflow.EffectRead {
		t.Errorf("alice's read action has effect %s for her", got)
	}
	if got := r.ForUser("bob").(effects).EffectOf("mcp.mine.echo", nil); got != workflow.EffectWrite {
		t.Errorf("alice's action has effect %s for bob, want write (unknown)", got)
	}
	_, err := r.Execute(context.Background(), workflow.ActionCall{UserID: "bob", Action: "mcp.mine.echo", Parameters: map[string]any{"text": "x"}})
	if workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("bob runs alice's action: %v, want not found", err)
	}
	if _, err := r.Execute(context.Background(), workflow.ActionCall{UserID: "alice", Action: "mcp.mine.echo", Parameters: map[string]any{"text": "x"}}); err != nil {
		t.Errorf("alice runs her action: %v", err)
	}
}

func TestSetExternalConcurrentWithReads(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{}, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, s := range r.Actions() {
					if _, ok := r.Action(s.Name); !ok && !strings.HasPrefix(s.Name, "mcp.") {
						t.Errorf("%s listed but not found", s.Name)
					}
				}
				_, err := r.Execute(context.Background(), workflow.ActionCall{UserID: "u", Action: "mcp.a.echo", Parameters: map[string]any{"text": "x"}})
				if err != nil && workflow.KindOf(err) != workflow.KindNotFound {
					t.Errorf("Execute: %v", err)
				}
			}
		})
	}
	for i := range 200 {
		if i%2 == 0 {
			r.SetExternal("a", []ExternalAction{echoExternal("mcp.a.echo", "", workflow.EffectRead)})
		} else {
			r.SetExternal("a", nil)
		}
	}
	close(stop)
	wg.Wait()
	if skipped := r.SetExternal("b", []ExternalAction{{Spec: workflow.ActionSpec{Name: "nodot"}, Run: echoExternal("x.y", "", "").Run}}); skipped["nodot"] == nil {
		t.Errorf("a name without a dot was accepted: %v", skipped)
	}
}
