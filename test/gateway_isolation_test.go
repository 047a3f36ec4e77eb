package test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestIsolation: every route with another user's ids answers 404, no token
// 401, a user token on /admin 403.
func TestIsolation(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{
		"prompt":    "iso1 read this",
		"documents": []map[string]string{{"name": "secret.txt", "content": base64.StdEncoding.EncodeToString([]byte("alice's secret"))}},
	}, &wf)
	g.waitDone(t, gwAlice, wf.ID)
	msgs := g.messages(t, gwAlice, wf.ID)
	docID := msgs[0].Documents[0].ID
	base := "/api/v1/workflows/" + wf.ID

	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"DELETE", base, nil},
		{"POST", base + "/rounds", map[string]any{"prompt": "mine now"}},
		{"POST", base + "/stop", nil},
		{"POST", base + "/resume", nil},
		{"GET", base + "/messages", nil},
		{"GET", base + "/events", nil},
		{"GET", base + "/documents/" + docID, nil},
	}
	for _, r := range routes {
		t.Run("bob "+r.method+" "+strings.TrimPrefix(r.path, base), func(t *testing.T) {
			status, hdr, body := g.send(t, r.method, r.path, gwBob, r.body)
			if status != http.StatusNotFound {
				t.Errorf("status %d, want 404: %s", status, body)
			}
			if hdr.Get("Content-Type") != "application/problem+json" || strings.Contains(string(body), "secret") {
				t.Errorf("answer %s %q", hdr.Get("Content-Type"), body)
			}
		})
		t.Run("no token "+r.method+" "+strings.TrimPrefix(r.path, base), func(t *testing.T) {
			if status, _, _ := g.send(t, r.method, r.path, "", r.body); status != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", status)
			}
		})
	}
	var list struct {
		Workflows []wfView `json:"workflows"`
	}
	g.expect(t, 200, "GET", "/api/v1/workflows", gwBob, nil, &list)
	if len(list.Workflows) != 0 {
		t.Errorf("bob lists %+v", list.Workflows)
	}
	for _, p := range []string{"/admin/v1/workflows", "/admin/v1/workflows/" + wf.ID + "/traces", "/admin/v1/nothing"} {
		if status, _, _ := g.send(t, "GET", p, gwAlice, nil); status != http.StatusForbidden {
			t.Errorf("alice GET %s = %d, want 403", p, status)
		}
		if status, _, _ := g.send(t, "GET", p, "", nil); status != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s = %d, want 401", p, status)
		}
	}
	var traces struct {
		Traces []json.RawMessage `json:"traces"`
	}
	g.expect(t, 200, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil, &traces)
	if len(traces.Traces) == 0 {
		t.Error("admin sees no traces")
	}
	// Alice still has everything: bob's DELETE did nothing.
	if got := g.messages(t, gwAlice, wf.ID); len(got) != len(msgs) {
		t.Errorf("alice's messages changed: %d → %d", len(msgs), len(got))
	}
}
