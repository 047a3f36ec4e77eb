package test

import (
	"context"
	"encoding/json"
	"fmt"
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
// and in base64 gets every form scrubbed at the action, end to end through
// the built binary on Redis: no form reaches a prompt the model server
// received, an API answer, a document, a trace, a Redis key or value, or a
// log line.
func TestEscapedSecretEchoesNeverLeak(t *testing.T) {
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
		b.WriteString(`]}`)
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
	check := func(what string, data []byte) {
		for _, f := range forms {
			if strings.Contains(string(data), f) {
				leaks = append(leaks, fmt.Sprintf("%s holds %q: %.200s", what, f, data))
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
