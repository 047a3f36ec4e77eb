package actions

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// crmRegistry returns a registry where alice's "crm" connection points at
// srv under /api/v2.
func crmRegistry(t *testing.T, srv *recorder, limits Limits, timeout time.Duration) *Registry {
	t.Helper()
	return mustNew(t, Config{
		Connections: []ConnectionConfig{{
			User: "alice", Label: "crm", Kind: "http", BaseURL: srv.URL + "/api/v2/", Timeout: timeout,
			Headers: map[string]string{"Authorization": "Bearer crm-token"},
		}},
		Limits: limits,
	}, nil, WithHTTPClient(srv.Client()))
}

// crmCall returns an http.request call through alice's "crm" connection.
func crmCall(params map[string]any) workflow.ActionCall {
	return withConn(call(HTTPRequestAction, params), &workflow.Connection{Label: "crm", Kind: "http"})
}

func TestHTTPRequestGet(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(200, "application/json", `{"id":42,"name":"Ada"}`))
	r := crmRegistry(t, srv, Limits{}, 0)
	c := crmCall(map[string]any{
		"path": "/customers/42", "query": map[string]any{"limit": 5.0, "active": true, "q": "a b&c"},
	})
	c.FencingToken = 12
	res, err := r.Execute(context.Background(), c)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := srv.got()
	if len(got) != 1 {
		t.Fatalf("server got %d requests", len(got))
	}
	req := got[0]
	if req.Method != "GET" || req.Path != "/api/v2/customers/42" || req.Query != "active=true&limit=5&q=a+b%26c" {
		t.Errorf("request = %s %s?%s", req.Method, req.Path, req.Query)
	}
	if req.Header.Get("Idempotency-Key") != "wf_1:2:3" || req.Header.Get("X-Fencing-Token") != "12" ||
		req.Header.Get("Authorization") != "Bearer crm-token" {
		t.Errorf("headers = %v", req.Header)
	}
	d := res.Documents[0]
	if d.Name != "get_customers_42.json" || d.MimeType != "application/json" || string(d.Content) != `{"id":42,"name":"Ada"}` || d.Size != 22 {
		t.Errorf("document = %q %q %q %d", d.Name, d.MimeType, d.Content, d.Size)
	}
	if want := "GET /api/v2/customers/42 answered 200 OK (application/json, 22 bytes), saved as get_customers_42.json.\nExcerpt: {\"id\":42,\"name\":\"Ada\"}"; res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
}

func TestHTTPRequestBodies(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(201, "text/plain", "created"))
	r := crmRegistry(t, srv, Limits{}, 0)
	tests := []struct {
		name     string
		params   map[string]any
		wantBody string
		wantType string
	}{
		{"object as JSON", map[string]any{"method": "POST", "path": "orders", "body": map[string]any{"sku": "A1", "qty": 2.0}}, `{"qty":2,"sku":"A1"}`, "application/json"},
		{"JSON string", map[string]any{"method": "PUT", "path": "/orders/1", "body": `{"qty":3}`}, `{"qty":3}`, "application/json"},
		{"plain string", map[string]any{"method": "PATCH", "path": "/orders/1/note", "body": "hello"}, "hello", "text/plain; charset=utf-8"},
		{"no body", map[string]any{"method": "DELETE", "path": "/orders/1"}, "", ""},
		{"Go-typed values", map[string]any{"method": "POST", "path": "/orders", "query": map[string]int{"v": 2}, "body": map[string][]int{"ids": {1, 2}}}, `{"ids":[1,2]}`, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := crmCall(tt.params)
			c.Step = len(tt.name) // a distinct idempotency key per call
			if _, err := r.Execute(context.Background(), c); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			got := srv.got()
			req := got[len(got)-1]
			if req.Body != tt.wantBody || req.Header.Get("Content-Type") != tt.wantType || req.Method != tt.params["method"] {
				t.Errorf("request = %s body %q type %q", req.Method, req.Body, req.Header.Get("Content-Type"))
			}
			if want := "wf_1:2:" + strings.TrimPrefix(req.Header.Get("Idempotency-Key"), "wf_1:2:"); req.Header.Get("Idempotency-Key") != want || want == "wf_1:2:" {
				t.Errorf("Idempotency-Key = %q", req.Header.Get("Idempotency-Key"))
			}
		})
	}
	_, err := r.Execute(context.Background(), crmCall(map[string]any{"path": "/x", "body": "data"}))
	wantKind(t, err, workflow.KindInvalid) // GET takes no body
}

func TestHTTPRequestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handle  http.HandlerFunc
		limits  Limits
		timeout time.Duration
		kind    workflow.Kind
		msg     string
	}{
		{"500", answer(500, "text/plain", "database exploded"), Limits{}, 0, workflow.KindUnavailable,
			`connection "crm" (GET /api/v2/customers) answered 500 Internal Server Error: database exploded`},
		{"404", answer(404, "application/json", `{"error":"no such customer"}`), Limits{}, 0, workflow.KindInvalid,
			"answered 404 Not Found"},
		{"timeout", hang, Limits{}, 100 * time.Millisecond, workflow.KindUnavailable,
			`connection "crm" did not answer within 100ms`},
		{"limits timeout", hang, Limits{HTTPTimeout: 150 * time.Millisecond}, 0, workflow.KindUnavailable,
			"did not answer within 150ms"},
		{"oversize", answer(200, "text/plain", strings.Repeat("x", 4096)), Limits{MaxResponseBytes: 1024}, 0, workflow.KindInvalid,
			`the reply from connection "crm" is larger than the 1024-byte limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRecorder(t, tt.handle)
			r := crmRegistry(t, srv, tt.limits, tt.timeout)
			res, err := r.Execute(context.Background(), crmCall(map[string]any{"path": "/customers"}))
			wantKind(t, err, tt.kind)
			if !strings.Contains(workflow.PublicMessage(err), tt.msg) {
				t.Errorf("PublicMessage = %q, want it to contain %q", workflow.PublicMessage(err), tt.msg)
			}
			if len(res.Documents) != 0 {
				t.Errorf("a failed request produced documents: %v", res.Documents)
			}
		})
	}
}

func TestHTTPRequestRefusesEscapes(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, answer(200, "text/plain", "inside"))
	r := crmRegistry(t, srv, Limits{}, 0)
	for _, path := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"https://evil.example.com/",
		"https:evil.example.com",
		"http:/customers",
		"//evil.example.com/x",
		"//169.254.169.254/",
		"../admin",
		"/customers/../../admin",
		"/customers/..",
		"%2e%2e/admin",
		"%2E%2E%2Fadmin",
		"/customers/.%2e/.%2E/admin",
		"%252e%252e/admin",
		"./customers",
		`\\evil.example.com\x`,
		"/customers%5c..%5cadmin",
		"/customers?admin=1",
		"/customers#frag",
		"/cust omers",
		"/customers\r\nHost: evil",
		"javascript:alert(1)",
		"mailto:a@example.com",
		"/%zz",
		// Tomcat, Jetty and Spring drop ";params" from a segment before
		// resolving dot segments, so "..;" climbs out of the base path there.
		"..;/admin",
		"/customers/..;/..;/admin",
		"/customers/.;x=1/..;jsessionid=1/admin",
		"/customers/%2e%2e%3b/admin",
		// Overlong UTF-8 for "." that lenient decoders still accept.
		"/%c0%ae%c0%ae/admin",
		// Full-width and other compatibility forms that NFKC turns into
		// "..", "/" and "\" on servers that normalise.
		"/customers/．．/admin",
		"/customers/%EF%BC%8E%EF%BC%8E/admin",
		"/customers／..／admin",
		"/customers/‥/admin",
		"/customers/＼admin",
	} {
		t.Run(path, func(t *testing.T) {
			_, err := r.Execute(context.Background(), crmCall(map[string]any{"path": path}))
			wantKind(t, err, workflow.KindInvalid)
			if !strings.Contains(workflow.PublicMessage(err), "refused") {
				t.Errorf("PublicMessage = %q", workflow.PublicMessage(err))
			}
		})
	}
	if got := srv.got(); len(got) != 0 {
		t.Errorf("refused paths reached the server: %+v", got)
	}
	// What stays inside the base URL is allowed, percent-encoding and
	// non-ASCII names included.
	if _, err := r.Execute(context.Background(), crmCall(map[string]any{"path": "/files/a%20b..txt"})); err != nil {
		t.Fatalf("inside path refused: %v", err)
	}
	if _, err := r.Execute(context.Background(), crmCall(map[string]any{"path": "/files/Müller-ﬁle"})); err != nil {
		t.Fatalf("a non-ASCII name was refused: %v", err)
	}
	if got := srv.got(); len(got) != 2 || got[0].Path != "/api/v2/files/a%20b..txt" {
		t.Errorf("server got %+v", got)
	}
}

func TestHTTPRequestRedirects(t *testing.T) {
	t.Parallel()
	evil := newRecorder(t, answer(200, "text/plain", "metadata"))
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v2/moved":
			http.Redirect(w, r, "/api/v2/here", http.StatusFound)
		case "/api/v2/out-of-base":
			http.Redirect(w, r, "/admin", http.StatusFound)
		case "/api/v2/matrix":
			w.Header().Set("Location", "/api/v2/..;/..;/admin")
			w.WriteHeader(http.StatusFound)
		case "/api/v2/other-host":
			http.Redirect(w, r, evil.URL+"/api/v2/x", http.StatusFound)
		default:
			answer(200, "text/plain", "here")(w, r)
		}
	})
	r := crmRegistry(t, srv, Limits{}, 0)
	res, err := r.Execute(context.Background(), crmCall(map[string]any{"path": "/moved"}))
	if err != nil || string(res.Documents[0].Content) != "here" {
		t.Fatalf("redirect within the base URL: %v %v", res, err)
	}
	for _, path := range []string{"/out-of-base", "/matrix", "/other-host"} {
		_, err := r.Execute(context.Background(), crmCall(map[string]any{"path": path}))
		wantKind(t, err, workflow.KindUnavailable)
		if !strings.Contains(workflow.PublicMessage(err), "leaves") {
			t.Errorf("%s: PublicMessage = %q", path, workflow.PublicMessage(err))
		}
	}
	if got := evil.got(); len(got) != 0 {
		t.Errorf("the redirect reached another host: %+v", got)
	}
	for _, req := range srv.got() {
		if req.Path == "/admin" {
			t.Errorf("the redirect left the base path: %+v", req)
		}
	}
}
