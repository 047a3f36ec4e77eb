package actionplan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

func TestParsePlan(t *testing.T) {
	t.Parallel()
	two := []actionplan.Draft{
		{Action: "a.one", Parameters: map[string]any{"x": "1"}, ResultLabel: "r1"},
		{Action: "a.two", Parameters: map[string]any{}},
	}
	const arr = `[{"action": "a.one", "parameters": {"x": "1"}, "resultLabel": "r1"}, {"action": "a.two"}]`
	tests := []struct {
		name  string
		reply string
		want  []actionplan.Draft
	}{
		{"bare array", arr, two},
		{"json fence", "```json\n" + arr + "\n```", two},
		{"fence without info string, prose around", "Plan:\n```\n" + arr + "\n```\nDone.", two},
		{"prose before and after", "Here you go: " + arr + " — hope that helps [really].", two},
		{"actions object", `{"actions": ` + arr + `}`, two},
		{"actions object in prose", `The plan is {"actions": ` + arr + `} as requested.`, two},
		{"single step object", `{"action": "a.two", "parameters": null}`, two[1:]},
		{"trailing commas and single quotes repaired", `[{'action': 'a.one', 'parameters': {'x': '1',}, 'resultLabel': 'r1',}, {"action": "a.two"},]`, two},
		{"unclosed array repaired", `[{"action": "a.one", "parameters": {"x": "1"}, "resultLabel": "r1"}, {"action": "a.two"}`, two},
		{"brackets inside strings", `[{"action": "a.one", "parameters": {"x": "[not] {json}"}}]`,
			[]actionplan.Draft{{Action: "a.one", Parameters: map[string]any{"x": "[not] {json}"}}}},
		{"empty plan", `[]`, []actionplan.Draft{}},
		{"legacy reference fields taken out", `[{"action": "a.one", "parameters": {"documentList": ["docList:r0", "docItem:doc_1"], "connectionReference": "crm", "x": 2}}]`,
			[]actionplan.Draft{{Action: "a.one", Parameters: map[string]any{"x": 2.0}, Documents: []string{"docList:r0", "docItem:doc_1"}, Connection: "crm"}}},
		{"single reference string and null connection", `[{"action": "a.one", "parameters": {"documentList": "docList:r0", "connectionReference": null}}]`,
			[]actionplan.Draft{{Action: "a.one", Parameters: map[string]any{}, Documents: []string{"docList:r0"}}}},
		{"malformed elements kept as problems", `[42, {"parameters": {}}, {"action": "a.one", "parameters": "x"}, {"action": "a.one", "parameters": {"documentList": [1]}}, {"action": "a.one", "resultLabel": 7}]`,
			[]actionplan.Draft{
				{Problem: "the step must be an object, got a number"},
				{Problem: `"action" must be a non-empty string naming a method`},
				{Action: "a.one", Parameters: map[string]any{}, Problem: `"parameters" must be an object, got a string`},
				{Action: "a.one", Parameters: map[string]any{}, Problem: "parameters.documentList[0] must be a reference string"},
				{Action: "a.one", Problem: `"resultLabel" must be a string`},
			}},
		{"SAGE shape in a steps object", `{"steps": [{"type": "tool", "name": "a.one", "arguments": {"x": "1"}, "resultLabel": "r1"}, {"type": "TOOL", "name": "a.two", "arguments": "{}"}]}`, two},
		{"SAGE reply steps", `[{"type": "reply", "content": "hi"}, {"type": "reply", "message": "bye"}]`, []actionplan.Draft{
			{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "hi"}},
			{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "bye"}},
		}},
		// SAGE's planner writes "text"; it wins over the other fields.
		{"SAGE reply text", `[{"type": "reply", "text": "SAGE-REPLY done", "content": "not this", "message": "nor this"}]`, []actionplan.Draft{
			{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "SAGE-REPLY done"}},
		}},
		{"SAGE fallback plan", `[{"type":"reply","text":"(计划不可用)"}]`, []actionplan.Draft{
			{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "(计划不可用)"}},
		}},
		{"SAGE tool then reply text", `[{"type":"tool","name":"a.one","arguments":{"x":"1"},"resultLabel":"r1"},{"type":"reply","text":"SAGE-REPLY ok"}]`, []actionplan.Draft{
			two[0],
			{Action: workflow.CompleteAction, Parameters: map[string]any{"message": "SAGE-REPLY ok"}},
		}},
		{"SAGE malformed steps kept as problems", `[{"type": "think", "text": "hmm"}, {"type": "reply", "content": 3}, {"type": "tool", "arguments": {}}, {"type": "tool", "name": "a.one", "arguments": "[1]"}]`,
			[]actionplan.Draft{
				{Problem: `"type" must be "tool" or "reply", got "think"`},
				{Problem: `a reply step needs "text" (or "content", "message"): the answer as a string`},
				{Problem: `"action" must be a non-empty string naming a method`},
				{Action: "a.one", Parameters: map[string]any{}, Problem: `"parameters" must be an object, got an array`},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := actionplan.ParsePlan(tc.reply)
			if err != nil {
				t.Fatalf("ParsePlan: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drafts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePlanRejectsRepliesWithoutAPlan(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, reply, want string }{
		{"prose only", "I will first extract the text, then summarize it.", "no JSON value"},
		{"empty", "", "no JSON value"},
		{"object without actions", `{"plan": "extract then summarize"}`, `without "actions"`},
		{"actions not a list", `{"actions": "extract"}`, `"actions" must be an array of steps, got a string`},
		{"bracketed aside only", "See [1] and [2] for details.", "no step objects"},
		{"oversized", "[" + strings.Repeat(" ", prompts.MaxReplyBytes) + "]", "more than the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := actionplan.ParsePlan(tc.reply)
			if err == nil {
				t.Fatalf("ParsePlan = %+v, want an error", got)
			}
			if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v (kind %s), want KindInvalid containing %q", err, workflow.KindOf(err), tc.want)
			}
		})
	}
}

// FuzzParsePlan checks that any reply parses or fails without panicking, in
// bounded time, and that every draft is either well-formed or says why not.
func FuzzParsePlan(f *testing.F) {
	seeds := []string{
		`[{"action": "a.b", "parameters": {"documentList": ["docList:x"], "connectionReference": "crm"}, "resultLabel": "r"}]`,
		"```json\n[{\"action\": \"a.b\"}]\n```",
		`{"actions": [{"action": "a.b", "parameters": {"x": [1, {"y": null}]}}]}`,
		`prose [ {"action": 'a.b', } ] more prose`,
		`[[[[[[[[[[`, `{"actions": [`, `"\u0000"`, "[{\"action\":\"\xff\"}]", `[1, "a", null, {}]`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		start := time.Now()
		drafts, err := actionplan.ParsePlan(reply)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("ParsePlan took %v on %d bytes", d, len(reply))
		}
		if err != nil {
			if len(drafts) != 0 || workflow.KindOf(err) != workflow.KindInvalid {
				t.Fatalf("error %v (kind %s) with %d drafts", err, workflow.KindOf(err), len(drafts))
			}
			return
		}
		for i, d := range drafts {
			if d.Problem == "" && (d.Action == "" || d.Parameters == nil) {
				t.Fatalf("draft %d has no problem but action %q, parameters %v", i, d.Action, d.Parameters)
			}
			for _, k := range []string{"documentList", "connectionReference"} {
				if _, ok := d.Parameters[k]; ok && d.Problem == "" {
					t.Fatalf("draft %d kept %s among its parameters", i, k)
				}
			}
		}
	})
}

func BenchmarkParsePlan(b *testing.B) {
	var steps []step
	for i := range 50 {
		steps = append(steps, echo(strings.Repeat("x", 200), "label"+string(rune('a'+i%26)), "docList:round1_user_context"))
	}
	valid := planJSON(steps...)
	cases := map[string]string{
		"50 steps in a fence":          "```json\n" + valid + "\n```",
		"10 steps to repair":           strings.ReplaceAll(planJSON(steps[:10]...), `"`, `'`),
		"50 malformed steps, over cap": strings.ReplaceAll(valid, `"`, `'`),
		"64KiB of brackets":            strings.Repeat("[", prompts.MaxReplyBytes),
		"64KiB of prose":               strings.Repeat("no plan here ", prompts.MaxReplyBytes/13),
	}
	for name, reply := range cases {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			for b.Loop() {
				_, _ = actionplan.ParsePlan(reply)
			}
		})
	}
}
