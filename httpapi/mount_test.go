package httpapi

import (
	"net/http"
	"testing"

	"github.com/twostep/twostep/apiv1"
)

// TestMountRunsBehindTheAPIAuth: a mount's Paths take a user token like
// /api (401 without one, the handler reading the user), its Public paths
// none; both go through the same middleware.
func TestMountRunsBehindTheAPIAuth(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Method + " " + r.URL.Path + " " + UserFrom(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	closed := 0
	env := newTestEnv(t, func(o *Options) {
		o.Mounts = []Mount{{Paths: []string{"/rpc"}, Prefixes: []string{"/rpcx"}, Public: []string{"/.well-known/card.json"},
			Handler: h, Close: func() { closed++ }}}
	})
	if rec := env.do(t, http.MethodPost, "/rpc", "", "{}"); rec.Code != http.StatusUnauthorized {
		t.Errorf("/rpc without a token answered %d", rec.Code)
	}
	if rec := env.do(t, http.MethodPost, "/rpc", aliceToken, "{}"); rec.Code != http.StatusTeapot || <-seen != "POST /rpc alice" {
		t.Errorf("/rpc with alice's token answered %d", rec.Code)
	}
	if rec := env.do(t, http.MethodGet, "/.well-known/card.json", "", nil); rec.Code != http.StatusTeapot || <-seen != "GET /.well-known/card.json " {
		t.Errorf("the public path answered %d", rec.Code)
	}
	if rec := env.do(t, http.MethodGet, "/rpc/more", aliceToken, nil); rec.Code != http.StatusNotFound {
		t.Errorf("a path under a mount's answered %d", rec.Code)
	}
	if rec := env.do(t, http.MethodGet, "/rpcx/tasks/x:cancel", "", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("a path under a prefix without a token answered %d", rec.Code)
	}
	if rec := env.do(t, http.MethodGet, "/rpcx/tasks/x:cancel", bobToken, nil); rec.Code != http.StatusTeapot || <-seen != "GET /rpcx/tasks/x:cancel bob" {
		t.Errorf("a path under a prefix answered %d", rec.Code)
	}
	env.srv.CloseStreams()
	env.srv.CloseStreams()
	if closed != 1 {
		t.Errorf("CloseStreams closed the mount %d times, want once", closed)
	}
}

// TestDecisionOfChecksAsTheRoute: the check a mount shares with the
// approvals route.
func TestDecisionOfChecksAsTheRoute(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b  apiv1.DecisionBody
		ok bool
	}{
		{apiv1.DecisionBody{Decision: "approve", Parameters: map[string]any{"a": 1}}, true},
		{apiv1.DecisionBody{Decision: "reject", Comment: "no"}, true},
		{apiv1.DecisionBody{Decision: "reject", Parameters: map[string]any{"a": 1}}, false},
		{apiv1.DecisionBody{Decision: "reject", Constraints: map[string]map[string]any{"a": {}}}, false},
		{apiv1.DecisionBody{Decision: "yes"}, false},
		{apiv1.DecisionBody{Decision: "approve", Remember: &apiv1.RememberBody{Scope: "workflow", TTL: "-1h"}}, false},
		{apiv1.DecisionBody{Decision: "approve", Remember: &apiv1.RememberBody{Scope: "user", TTL: "8h"}}, true},
	} {
		d, err := DecisionOf(c.b)
		if (err == nil) != c.ok || err == nil && d.Approve != (c.b.Decision == "approve") {
			t.Errorf("DecisionOf(%+v) = %+v, %v", c.b, d, err)
		}
	}
}
