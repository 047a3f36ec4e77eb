package httpapi

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

func TestParseCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []Credential
		wantErr string
	}{
		{"", nil, ""},
		{"alice:t1", []Credential{{UserID: "alice", Token: "t1"}}, ""},
		{" alice:t1 , bob:t:2 ,", []Credential{{UserID: "alice", Token: "t1"}, {UserID: "bob", Token: "t:2"}}, ""},
		{"carol:sha256:" + strings.Repeat("ab", 32), []Credential{{UserID: "carol", Digest: bytes.Repeat([]byte{0xab}, 32)}}, ""},
		{"carol:sha256:abc", nil, "sha256: must be followed by 64 hex digits"},
		{"alice", nil, "entry 1 is not userId:token"},
		{"alice:t1,:t2,bob:", nil, "entry 2 is not userId:token; entry 3 is not userId:token"},
		{"a b:t1", nil, "contains spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCredentials(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "t1") || strings.Contains(err.Error(), "t2") {
					t.Errorf("error leaks a token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].UserID != tt.want[i].UserID || got[i].Token != tt.want[i].Token || !bytes.Equal(got[i].Digest, tt.want[i].Digest) {
					t.Errorf("[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestNewAuthenticatorRefusesNoTokens(t *testing.T) {
	t.Parallel()
	// ErrNoCredentials is also what cmd/gateway says before wiring anything.
	if _, err := NewAuthenticator(nil, nil, false, nil); !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), "GATEWAY_INSECURE_DEV") {
		t.Fatalf("err = %v, want ErrNoCredentials naming GATEWAY_INSECURE_DEV", err)
	}
	a, err := NewAuthenticator(nil, nil, true, nil)
	if err != nil || !a.Insecure() {
		t.Fatalf("insecure dev: %v, insecure=%v", err, a != nil && a.Insecure())
	}
}

func TestAuthRoutes(t *testing.T) {
	t.Parallel()
	wfID := workflow.NewID(workflow.PrefixWorkflow)
	tests := []struct {
		name, method, path, header string
		status                     int
		user                       string // user the engine sees, when it is reached
	}{
		{"no token", "GET", "/api/v1/workflows/" + wfID, "", 401, ""},
		{"basic scheme", "GET", "/api/v1/workflows/" + wfID, "Basic " + aliceToken, 401, ""},
		{"unknown token", "GET", "/api/v1/workflows/" + wfID, "Bearer nope", 401, ""},
		{"token prefix", "GET", "/api/v1/workflows/" + wfID, "Bearer " + aliceToken[:len(aliceToken)-1], 401, ""},
		{"user", "GET", "/api/v1/workflows/" + wfID, "Bearer " + aliceToken, 200, "alice"},
		{"lower-case scheme", "GET", "/api/v1/workflows/" + wfID, "bearer " + bobToken, 200, "bob"},
		{"admin token acts as its user", "GET", "/api/v1/workflows/" + wfID, "Bearer " + adminToken, 200, "root"},
		{"admin without token", "GET", "/admin/v1/workflows/" + wfID + "/traces", "", 401, ""},
		{"admin with user token", "GET", "/admin/v1/workflows/" + wfID + "/traces", "Bearer " + aliceToken, 403, ""},
		{"admin unknown path with user token", "POST", "/admin/v1/anything", "Bearer " + aliceToken, 403, ""},
		{"admin with admin token, no route yet", "GET", "/admin/v1/workflows/" + wfID + "/traces", "Bearer " + adminToken, 404, ""},
		{"health is public", "GET", "/healthz", "", 200, ""},
		{"openapi is public", "GET", "/openapi.json", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, nil)
			var seen string
			env.engine.GetFn = func(user, id string) (*workflow.Workflow, error) {
				seen = user
				w := testWorkflow(user, workflow.StatusRunning)
				w.ID = id
				return w, nil
			}
			rec := env.doHeader(t, tt.method, tt.path, tt.header)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status >= 400 {
				problem(t, rec)
			}
			if seen != tt.user {
				t.Errorf("engine saw user %q, want %q", seen, tt.user)
			}
			if tt.status == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			for _, tok := range []string{aliceToken, bobToken, adminToken} {
				if strings.Contains(env.logs.String(), tok) {
					t.Errorf("log contains a token: %s", env.logs)
				}
			}
		})
	}
}

func TestInsecureDevMapsEveryRequestToDev(t *testing.T) {
	t.Parallel()
	auth, err := NewAuthenticator(nil, nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, func(o *Options) { o.Auth = auth })
	var seen string
	env.engine.GetFn = func(user, id string) (*workflow.Workflow, error) {
		seen = user
		return testWorkflow(user, workflow.StatusRunning), nil
	}
	for _, h := range []string{"", "Bearer whatever"} {
		rec := env.doHeader(t, "GET", "/api/v1/workflows/"+workflow.NewID(workflow.PrefixWorkflow), h)
		if rec.Code != 200 || seen != DevUser {
			t.Errorf("header %q: status %d, user %q; want 200 and %q", h, rec.Code, seen, DevUser)
		}
	}
}
