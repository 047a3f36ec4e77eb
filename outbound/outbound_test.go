package outbound

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

func TestPathUnder(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://crm.example.com/api/v2")
	tests := []struct {
		path  string
		query map[string]any
		want  string // the URL, or a fragment of the refusal
		ok    bool
	}{
		{"/customers/42", map[string]any{"limit": 5.0, "open": true}, "https://crm.example.com/api/v2/customers/42?limit=5&open=true", true},
		{"customers/caf%C3%A9", nil, "https://crm.example.com/api/v2/customers/caf%C3%A9", true},
		{"https://evil.example/x", nil, "absolute URLs are not allowed", false},
		{"//evil.example/x", nil, "names another host", false},
		{"/../admin", nil, `"." and ".." segments`, false},
		{"/%2e%2e/admin", nil, `"." and ".." segments`, false},
		{"/..;/admin", nil, `"." and ".." segments`, false},
		{"/%252e%252e/admin", nil, "double percent-encoding", false},
		{`/a\b`, nil, "backslashes", false},
		{"/a?b=1", nil, "query parameter", false},
		{"/\uff0e\uff0e\uff0fadmin", nil, "compatibility forms", false},
	}
	for _, tt := range tests {
		u, err := PathUnder(base, tt.path, tt.query)
		switch {
		case tt.ok && (err != nil || u.String() != tt.want):
			t.Errorf("PathUnder(%q) = %v, %v; want %s", tt.path, u, err, tt.want)
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("PathUnder(%q) = %v, %v; want a refusal with %q", tt.path, u, err, tt.want)
		case !tt.ok && workflow.KindOf(err) != workflow.KindInvalid:
			t.Errorf("PathUnder(%q): kind %s, want invalid", tt.path, workflow.KindOf(err))
		}
	}
}

func TestSendKeepsRedirectsUnderBase(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/in":
			http.Redirect(w, r, "/api/there", http.StatusFound)
		case "/api/out":
			http.Redirect(w, r, "/admin", http.StatusFound)
		case "/api/big":
			w.Write([]byte(strings.Repeat("x", 100)))
		default:
			w.Write([]byte("reached " + r.URL.Path))
		}
	}))
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL + "/api")
	c := Client{HTTP: srv.Client(), Timeout: 5 * time.Second, MaxResponseBytes: 64}
	send := func(path string) (Reply, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		return c.Send(context.Background(), req, base, 0, `connection "crm"`)
	}
	if rp, err := send("/api/in"); err != nil || !rp.OK() || string(rp.Body) != "reached /api/there" {
		t.Errorf("redirect within the base: %+v, %v", rp, err)
	}
	if _, err := send("/api/out"); err == nil || !strings.Contains(err.Error(), "leaves") || workflow.KindOf(err) != workflow.KindUnavailable {
		t.Errorf("redirect out of the base: err = %v, want an unavailable error saying it leaves", err)
	}
	if _, err := send("/api/big"); err == nil || !strings.Contains(err.Error(), "larger than the 64-byte limit") {
		t.Errorf("oversize reply: err = %v", err)
	}
}

func TestStatusErrorKinds(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]workflow.Kind{404: workflow.KindInvalid, 502: workflow.KindUnavailable} {
		err := StatusError(Reply{Status: status, StatusText: http.StatusText(status)}, "the CRM", "no such customer")
		if workflow.KindOf(err) != want || !strings.Contains(err.Error(), "no such customer") {
			t.Errorf("StatusError(%d) = %v (%s), want kind %s", status, err, workflow.KindOf(err), want)
		}
	}
}

func BenchmarkPathUnder(b *testing.B) {
	base, _ := url.Parse("https://crm.example.com/api/v2")
	for b.Loop() {
		if _, err := PathUnder(base, "/customers/42/orders", map[string]any{"limit": 5.0}); err != nil {
			b.Fatal(err)
		}
	}
}

// A path whose segments are separated by backslashes — as a path
// parameter's value may put them there, percent-encoded as %5C — is not
// within the base: some servers read "\..\admin" as "/../admin".
func TestWithinBaseRefusesBackslashDotSegments(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://crm.example.com/api/v2")
	for _, raw := range []string{`/api/v2/items/\..\admin`, `/api/v2/items\..\..\admin`, `/api/v2/\.\x`, `/api/v2/a/..;x\y`} {
		u := *base
		u.Path = raw
		u.RawPath = ""
		if WithinBase(base, &u) {
			t.Errorf("WithinBase(%q) = true, want the backslash dot segment refused", raw)
		}
	}
	u := *base
	u.Path = `/api/v2/items/a\b..c`
	if !WithinBase(base, &u) {
		t.Errorf("WithinBase(%q) = false, want a name with dots and a backslash accepted", u.Path)
	}
}
