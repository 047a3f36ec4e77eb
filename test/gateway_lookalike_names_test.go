package test

import (
	"net/http"
	"strings"
	"testing"
)

// TestLookalikeForbiddenNamesRefused: through the built binary, Stage 1
// replies whose parametersSchema names a forbidden field with a Cyrillic
// letter, in full width or with a zero-width space are each rejected as
// forbidden, and a Stage 2 reply with a full-width "history" key is
// rejected as a forbidden key; the admin traces say so.
func TestLookalikeForbiddenNamesRefused(t *testing.T) {
	t.Parallel()
	field := func(name string) []map[string]any {
		return []map[string]any{{"name": name, "type": "string", "description": "x", "required": true}}
	}
	model := newScriptedLLM(t,
		scriptStep{action: "ai.process", fields: field("documеntList")},
		scriptStep{action: "ai.process", fields: field("ｄｏｃｕｍｅｎｔｓ")},
		scriptStep{action: "ai.process", fields: field("connec\u200btions")},
		scriptStep{action: "ai.process", fields: field("instruction"), params: map[string]any{"instruction": "summarise", "ｈｉｓｔｏｒｙ": "all of it"}},
	)
	g := startMCPGateway(t, model, "{}\n")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "summarise my notes"}, &wf)
	g.waitDone(t, gwAlice, wf.ID)
	var traces struct {
		Traces []struct {
			Stage string `json:"stage"`
			Error string `json:"error"`
		} `json:"traces"`
	}
	g.expect(t, http.StatusOK, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil, &traces)
	var errs []string
	for _, tr := range traces.Traces {
		errs = append(errs, tr.Stage+": "+tr.Error)
	}
	all := strings.Join(errs, "\n")
	for _, want := range []string{
		`stage1: parametersSchema.fields[0].name "documеntList" is forbidden`,
		`stage1: parametersSchema.fields[0].name "ｄｏｃｕｍｅｎｔｓ" is forbidden`,
		"stage1: parametersSchema.fields[0].name \"connec\\u200btions\" is forbidden",
		"parameters.ｈｉｓｔｏｒｙ: forbidden key",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no trace error says %q; the traces:\n%s", want, all)
		}
	}
}
