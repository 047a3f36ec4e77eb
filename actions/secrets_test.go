package actions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// Unique markers: if one shows up anywhere but in the request the test
// server receives, a secret has leaked.
const (
	connMarker   = "conn-SECRET-7f3a91c2e4"
	tenantMarker = "tenant-SECRET-0b6d5e"
	actionMarker = "action-SECRET-c81f0a77"
)

// echoHandler answers like httpbin: the request's headers, in the body.
// /api/fail echoes them with a 500, /action answers an HTTP action reply
// that quotes the key it got.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	dump, _ := json.Marshal(r.Header)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/fail":
		w.WriteHeader(500)
		fmt.Fprintf(w, `{"error": "rejected headers %s"}`, strings.ReplaceAll(string(dump), `"`, `'`))
	case "/action":
		fmt.Fprintf(w, `{"text": "used key %s", "documents": [{"name": "headers-%s.json", "content": "%s"}]}`,
			r.Header.Get("X-Api-Key"), r.Header.Get("X-Api-Key"), base64.StdEncoding.EncodeToString(dump))
	case "/action-fail":
		w.WriteHeader(502)
		fmt.Fprintf(w, `{"error": "key %s refused"}`, r.Header.Get("X-Api-Key"))
	default:
		_, _ = w.Write(dump)
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, echoHandler)
	yaml := fmt.Sprintf(`
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: %[1]s/api
    description: Alice's CRM
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
      X-Tenant: "${TENANT}"
httpActions:
  - name: crm.echo
    description: Echo
    url: %[1]s/action
    connectionKind: http
    headers: {X-Api-Key: "${ACTION_KEY}"}
  - name: crm.fail
    description: Fail
    url: %[1]s/action-fail
    headers: {X-Api-Key: "${ACTION_KEY}"}
`, srv.URL)
	cfg, err := LoadConfig(strings.NewReader(yaml), env(map[string]string{
		"CRM_TOKEN": connMarker, "TENANT": tenantMarker, "ACTION_KEY": actionMarker,
	}))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	var logs bytes.Buffer
	r := mustNew(t, cfg, answering("ok"), WithHTTPClient(srv.Client()), WithLogger(zerolog.New(&logs).Level(zerolog.DebugLevel)))

	crm := &workflow.Connection{Label: "crm", Kind: "http"}
	calls := []workflow.ActionCall{
		withConn(call(HTTPRequestAction, map[string]any{"path": "/echo"}), crm),
		withConn(call(HTTPRequestAction, map[string]any{"path": "/fail"}), crm),
		withConn(call(HTTPRequestAction, map[string]any{"path": "http://169.254.169.254/"}), crm),
		withConn(call("crm.echo", map[string]any{}), crm),
		call("crm.fail", map[string]any{}),
	}
	var leaks []string
	check := func(where, s string) {
		for _, m := range []string{connMarker, tenantMarker, actionMarker} {
			if strings.Contains(s, m) {
				leaks = append(leaks, fmt.Sprintf("%s contains %s: %s", where, m, s))
			}
		}
	}
	var results []workflow.ActionResult
	for i, c := range calls {
		res, err := r.Execute(context.Background(), c)
		where := fmt.Sprintf("call %d (%s)", i, c.Action)
		if err != nil {
			check(where+" error", err.Error())
			check(where+" public message", workflow.PublicMessage(err))
		}
		check(where+" text", res.Text)
		for _, d := range res.Documents {
			check(where+" document name", d.Name)
			check(where+" document content", string(d.Content))
		}
		results = append(results, res)
	}
	conns, _ := json.Marshal(r.Connections("alice"))
	check("Connections", string(conns))
	specs, _ := json.Marshal(r.Actions())
	check("Actions", string(specs))
	check("logs", logs.String())
	for _, l := range leaks {
		t.Error(l)
	}

	// The secrets did reach the server, on the outgoing requests only.
	got := srv.got()
	if len(got) != 4 {
		t.Fatalf("server got %d requests, want 4 (the SSRF attempt must not be sent)", len(got))
	}
	if got[0].Header.Get("Authorization") != "Bearer "+connMarker || got[0].Header.Get("X-Tenant") != tenantMarker {
		t.Errorf("connection headers not sent: %v", got[0].Header)
	}
	if got[2].Header.Get("X-Api-Key") != actionMarker {
		t.Errorf("action key not sent: %v", got[2].Header)
	}
	// The echoes were scrubbed, not dropped.
	if !strings.Contains(string(results[0].Documents[0].Content), redact.Redacted) || !strings.Contains(results[3].Text, "used key "+redact.Redacted) {
		t.Errorf("echoed secrets not redact.Redacted: %q / %q", results[0].Documents[0].Content, results[3].Text)
	}
	if n := strings.Count(logs.String(), `"message":"action executed"`); n != len(calls) {
		t.Errorf("%d log lines, want %d:\n%s", n, len(calls), logs.String())
	}
	for _, m := range []string{connMarker, tenantMarker, actionMarker, "Bearer " + connMarker} {
		if !slices.Contains(r.Secrets(), m) {
			t.Errorf("Secrets() lacks %q", m)
		}
	}
}

// TestEscapedEchoesNeverLeak: an upstream that echoes the connection
// secret JSON-escaped ("\"", PHP's "\/"), \u-escaped, URL-encoded or in
// base64 gets every form scrubbed from the action's text and documents:
// none of them can reach a message, a prompt or a trace.
func TestEscapedEchoesNeverLeak(t *testing.T) {
	t.Parallel()
	const secret = `sk-"quoted"/slash+plus`
	escaped, _ := json.Marshal(secret)
	forms := map[string]string{
		"json":   string(escaped[1 : len(escaped)-1]),
		"php":    strings.ReplaceAll(string(escaped[1:len(escaped)-1]), "/", `\/`),
		"url":    url.QueryEscape(secret),
		"base64": base64.StdEncoding.EncodeToString([]byte(secret)),
	}
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var b strings.Builder
		b.WriteString(`{`)
		for name, f := range forms {
			fmt.Fprintf(&b, `"%s": "%s", `, name, f)
		}
		b.WriteString(`"ok": true}`)
		_, _ = w.Write([]byte(b.String()))
	})
	yaml := fmt.Sprintf(`
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: %s/api
    headers:
      X-Api-Key: "${CRM_KEY}"
`, srv.URL)
	cfg, err := LoadConfig(strings.NewReader(yaml), env(map[string]string{"CRM_KEY": secret}))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	r := mustNew(t, cfg, answering("ok"), WithHTTPClient(srv.Client()))
	res, err := r.Execute(context.Background(), withConn(call(HTTPRequestAction, map[string]any{"path": "/echo"}),
		&workflow.Connection{Label: "crm", Kind: "http"}))
	if err != nil {
		t.Fatal(err)
	}
	outputs := []string{res.Text}
	for _, d := range res.Documents {
		outputs = append(outputs, d.Name, string(d.Content))
	}
	for _, out := range outputs {
		for name, f := range forms {
			if strings.Contains(out, f) {
				t.Errorf("the %s echo survived: %s", name, out)
			}
		}
	}
	if got := strings.Count(strings.Join(outputs, "\n"), redact.Redacted); got < len(forms) {
		t.Errorf("%d redactions in the output, want at least %d (one per echo):\n%s", got, len(forms), strings.Join(outputs, "\n"))
	}
}

// TestShortSecretsAreRefused: configuration refuses a credential under 8
// characters (from the environment or written in the file) and names the
// header and variable, never the value.
func TestShortSecretsAreRefused(t *testing.T) {
	t.Parallel()
	yaml := `
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: https://crm.example.test
    headers:
      X-Tenant: "${TENANT}"
      Authorization: "Bearer abc12"
`
	_, err := LoadConfig(strings.NewReader(yaml), env(map[string]string{"TENANT": "t-42"}))
	if err == nil {
		t.Fatal("short secrets were accepted")
	}
	for _, want := range []string{`header "X-Tenant": environment variable TENANT is 4 characters long`,
		`header "Authorization": the credential is 5 characters long`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "abc12") || strings.Contains(err.Error(), "t-42") {
		t.Errorf("the error quotes a secret: %v", err)
	}
}
