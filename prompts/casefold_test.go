package prompts

import (
	"strings"
	"testing"
)

// The rejection rules match names the way Go's encoding/json matches
// struct fields (Unicode simple case folding), so a key a downstream
// decoder would take for "parameters" or "documents" cannot slip past them
// by its case or by a folding twin such as "ſ" (U+017F) for "s".
func TestRejectionRulesIgnoreCase(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	tests := []struct {
		name    string
		problem func() []string
		want    string
	}{
		{"stage 1 Parameters", func() []string {
			return ParseStage1(strings.Replace(validStage1, `"action":`, `"Parameters": {"customer": "4711"}, "action":`, 1), stage1Env()).Problems
		}, `has a "Parameters" key`},
		{"stage 1 field Documents", func() []string {
			return ParseStage1(strings.Replace(validStage1, `"name": "customer"`, `"name": "Documents"`, 1), stage1Env()).Problems
		}, `"Documents" is forbidden`},
		{"stage 2 DocumentList", func() []string {
			return ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "DocumentList": ["docList:a"]}}`, spec, askedFields("instruction", "language", "maxWords"), reg).Problems
		}, "parameters.DocumentList: forbidden key"},
		{"stage 2 folding twin", func() []string {
			return ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "documentſ": ["docList:a"]}}`, spec, askedFields("instruction", "language", "maxWords"), reg).Problems
		}, "parameters.documentſ: forbidden key"},
		{"stage 1 field with a Cyrillic е", func() []string {
			return ParseStage1(strings.Replace(validStage1, `"name": "customer"`, `"name": "documеntList"`, 1), stage1Env()).Problems
		}, `"documеntList" is forbidden`},
		{"stage 1 field with a zero-width space", func() []string {
			return ParseStage1(strings.Replace(validStage1, `"name": "customer"`, `"name": "docu\u200bments"`, 1), stage1Env()).Problems
		}, `is forbidden`},
		{"stage 2 full width", func() []string {
			return ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "ｄｏｃｕｍｅｎｔｓ": ["docList:a"]}}`, spec, askedFields("instruction", "language", "maxWords"), reg).Problems
		}, "parameters.ｄｏｃｕｍｅｎｔｓ: forbidden key"},
		{"stage 2 trailing space", func() []string {
			return ParseStage2(`{"schema": "parameters_v1", "parameters": {"instruction": "x", "history ": "h"}}`, spec, askedFields("instruction", "language", "maxWords"), reg).Problems
		}, "parameters.history : forbidden key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.problem()
			if !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}
