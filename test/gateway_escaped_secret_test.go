package test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redact"
)

// TestEscapedSecretEchoesNeverLeak: a CRM that echoes the connection
// secret back JSON-escaped, PHP-escaped ("\/"), \u-escaped, URL-encoded
// and in base64, and in the forms a probe found leaking (upper and lower
// case, .NET's JSON with only some characters \u-escaped, hex, HTML
// character references), gets every form scrubbed at the action, end to
// end through the built binary on Redis: no form reaches a prompt the
// model server received, an API answer, a document, a trace, a Redis key
// or value, or a log line.
func TestEscapedSecretEchoesNeverLeak(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	const secret = `conn/"MARKER"+9d41e7b2`
	forms := redact.Forms(secret)
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		quoted, _ := json.Marshal(got)
		inner := string(quoted[1 : len(quoted)-1])
		var b strings.Builder
		fmt.Fprintf(&b, `{"accounts": ["acme"], "json": "%s", "php": "%s", "u": "`, inner, strings.ReplaceAll(inner, "/", `\/`))
		for _, c := range got {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		b.WriteString(`", "forms": [`)
		for i, f := range redact.Forms(got)[4:] { // the URL and base64 forms
			if i > 0 {
				b.WriteString(", ")
			}
			q, _ := json.Marshal(f)
			b.Write(q)
		}
		b.WriteString(`]`)
		for name, f := range mixedForms(got) {
			q, _ := json.Marshal(f)
			if name == "dotnet" {
				q = []byte(`"` + f + `"`) // already JSON
			}
			fmt.Fprintf(&b, `, %q: %s`, name, q)
		}
		b.WriteString(`}`)
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(crm.Close)
	model := &connLLM{}
	llmSrv := httptest.NewServer(model)
	t.Cleanup(llmSrv.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n" +
		"    description: the CRM\n    headers:\n      Authorization: Bearer ${E2E_ESCAPED_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "REDIS_URL="+url, "OPENAI_BASE_URL="+llmSrv.URL+"/v1", "GATEWAY_CONFIG="+cfg,
		"E2E_ESCAPED_SECRET="+secret, "LOG_LEVEL=debug")

	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "list the CRM accounts"}, &wf)
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}

	var leaks []string
	for _, f := range mixedForms(secret) {
		forms = append(forms, f)
	}
	check := func(what string, data []byte) {
		for _, f := range forms {
			if strings.Contains(string(data), f) {
				leaks = append(leaks, fmt.Sprintf("%s holds %q: %.200s", what, f, data))
			}
		}
		// Whatever escaping the data went through since, the secret's
		// tail (never escaped by mixedForms) shows in any case or in hex.
		lower := strings.ToLower(string(data))
		for _, tail := range []string{"9d41e7b2", fmt.Sprintf("%x", "9d41e7b2")} {
			if i := strings.Index(lower, tail); i >= 0 {
				leaks = append(leaks, fmt.Sprintf("%s holds %q in some case: …%s…", what, tail, data[max(0, i-120):min(len(data), i+40)]))
			}
		}
	}
	model.mu.Lock()
	for i, p := range model.prompts {
		check(fmt.Sprintf("prompt %d", i+1), []byte(p))
	}
	sawRedacted := strings.Contains(strings.Join(model.prompts, ""), redact.Redacted)
	model.mu.Unlock()
	if !sawRedacted {
		t.Error("no prompt shows the scrubbed echo: the CRM's answer never reached Stage 1")
	}
	for _, path := range []string{"/api/v1/workflows/" + wf.ID, "/api/v1/workflows/" + wf.ID + "/messages",
		"/api/v1/workflows/" + wf.ID + "/events"} {
		_, _, body := g.send(t, "GET", path, gwAlice, nil)
		check(path, body)
	}
	for _, m := range g.messages(t, gwAlice, wf.ID) {
		for _, d := range m.Documents {
			_, _, body := g.send(t, "GET", "/api/v1/workflows/"+wf.ID+"/documents/"+d.ID, gwAlice, nil)
			check("document "+d.Name, body)
		}
	}
	_, _, traces := g.send(t, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil)
	check("admin traces", traces)
	check("gateway log", []byte(g.stderr.String()))

	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	keys := 0
	iter := rdb.Scan(ctx, 0, "*"+wf.ID+"*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		keys++
		check("redis key", []byte(key))
		dump, err := dumpKey(ctx, rdb, key)
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		check("redis "+key, dump)
	}
	if keys == 0 {
		t.Fatal("no Redis key names the workflow: the store layout changed, so this check saw nothing")
	}
	for _, l := range leaks {
		t.Error(l)
	}
}

// mixedForms are the secret's forms beyond redact.Forms a probe found
// reaching the model and the logs: upper and lower case, JSON with some
// characters \u-escaped (as .NET writes it; the tail after "+" is left
// plain), hex and HTML character references.
func mixedForms(secret string) map[string]string {
	var dotnet, entities strings.Builder
	head, tail, _ := strings.Cut(secret, "+")
	for i, c := range head {
		if i%2 == 0 || c == '"' {
			fmt.Fprintf(&dotnet, `\u%04X`, c)
		} else {
			dotnet.WriteRune(c)
		}
		if i%2 == 0 {
			fmt.Fprintf(&entities, "&#x%x;", c)
		} else {
			entities.WriteString(html.EscapeString(string(c)))
		}
	}
	dotnet.WriteString(`\u002B` + tail)
	entities.WriteString("&#43;" + tail)
	return map[string]string{
		"upper": strings.ToUpper(secret), "lower": strings.ToLower(secret), "dotnet": dotnet.String(),
		"hex": fmt.Sprintf("%x", secret), "html": entities.String(),
	}
}

// dumpKey returns every value stored at key, whatever its type.
func dumpKey(ctx context.Context, rdb *redis.Client, key string) ([]byte, error) {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	var v any
	switch typ {
	case "string":
		v, err = rdb.Get(ctx, key).Result()
	case "hash":
		v, err = rdb.HGetAll(ctx, key).Result()
	case "list":
		v, err = rdb.LRange(ctx, key, 0, -1).Result()
	case "set":
		v, err = rdb.SMembers(ctx, key).Result()
	case "zset":
		v, err = rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
	case "stream":
		v, err = rdb.XRange(ctx, key, "-", "+").Result()
	}
	if err != nil {
		return nil, err
	}
	return []byte(fmt.Sprint(v)), nil
}
