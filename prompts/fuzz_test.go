package prompts

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/workflow"
)

func FuzzParseStage1(f *testing.F) {
	for _, s := range []string{validStage1, "```json\n" + validStage1 + "\n```", `{"action": 1, "parameters": {}}`, `[{"a":`, "{'action': 'ai.process',}", `{"requiredInputDocuments": ["docItem:doc_x:a:b"]}`, ""} {
		f.Add(s)
	}
	env := stage1Env()
	f.Fuzz(func(t *testing.T, reply string) {
		res := ParseStage1(reply, env)
		if res.Parsed != nil && !json.Valid(res.Parsed) {
			t.Fatalf("Parsed is not valid JSON: %q", res.Parsed)
		}
		if len(res.Problems) > 0 {
			return
		}
		// Accepted: every rule of DESIGN §3 holds.
		if _, ok := env.Registry.Action(res.Selection.Action); !ok {
			t.Fatalf("accepted unregistered action %q", res.Selection.Action)
		}
		for _, fld := range res.Selection.ParametersSchema.Fields {
			if workflow.IsForbiddenField(fld.Name) {
				t.Fatalf("accepted forbidden field %q", fld.Name)
			}
		}
		if _, err := workflow.ResolveDocuments(env.Messages, res.Selection.RequiredInputDocuments); err != nil {
			t.Fatalf("accepted unresolvable documents: %v", err)
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(res.Parsed, &top) == nil {
			if _, ok := top["parameters"]; ok {
				t.Fatal("accepted a reply with a parameters key")
			}
		}
	})
}

func FuzzParseStage2(f *testing.F) {
	for _, s := range []string{`{"schema": "parameters_v1", "parameters": {"instruction": "x"}}`, "```\n{\"schema\":\"parameters_v1\",\"parameters\":{\"instruction\":\"x\",},}\n```", `{"parameters": {"documents": []}}`, `{"schema":`, "[]"} {
		f.Add(s)
	}
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	f.Fuzz(func(t *testing.T, reply string) {
		res := ParseStage2(reply, spec, askedFields("instruction", "language", "maxWords"), reg)
		if len(res.Problems) > 0 {
			return
		}
		for k := range res.Parameters {
			if workflow.IsForbiddenField(k) {
				t.Fatalf("accepted forbidden key %q", k)
			}
		}
		if lines := reg.ValidateParameters(spec.Name, res.Parameters); len(lines) > 0 {
			t.Fatalf("accepted invalid parameters: %q", lines)
		}
	})
}

func FuzzHistory(f *testing.F) {
	f.Add("text", "summary", 40)
	f.Fuzz(func(t *testing.T, text, summary string, budget int) {
		budget = placeholders.MinHistoryBudget + (budget%5000+5000)%5000
		_, msgs := twoRounds()
		msgs[0].Text, msgs[4].Summary = text, summary
		h := placeholders.History(msgs, budget)
		sealed := placeholders.HistorySections(msgs, placeholders.Limits{History: budget}).SealedText()
		if utf8.RuneCountInString(sealed) > budget || !strings.HasPrefix(h, "- [round 2, step 2]") {
			t.Fatalf("sealed section of %d characters over a budget of %d, or the history does not start with the newest entry:\n%s",
				utf8.RuneCountInString(sealed), budget, h)
		}
	})
}

// adversarial returns replies that make JSON repair work hardest, at the
// largest size handed to the repair library.
func adversarial() map[string]string {
	n := MaxRepairBytes
	return map[string]string{
		"unclosed nesting": strings.Repeat(`{"a":`, n/5),
		"unquoted keys":    "{" + strings.Repeat(`a:1,`, n/4-1),
		"mixed quotes":     strings.Repeat(`{'a': [1, 2, "x`, n/16),
		"fences":           strings.Repeat("```", MaxReplyBytes/3),
	}
}

func BenchmarkParseStage1Adversarial(b *testing.B) {
	env := stage1Env()
	for name, reply := range adversarial() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ParseStage1(reply, env)
			}
		})
	}
}

func TestLargeInvalidReplyIsNotRepaired(t *testing.T) {
	t.Parallel()
	reply := `{"schema": "parameters_v1", "parameters": {'instruction': "` + strings.Repeat("x", MaxRepairBytes) + `"}}`
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	res := ParseStage2(reply, spec, askedFields("instruction", "language", "maxWords"), reg)
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "too large to repair") {
		t.Errorf("problems = %.200q", res.Problems)
	}
	// Trailing commas are fixed at any size.
	reply = `{"schema": "parameters_v1", "parameters": {"instruction": "` + strings.Repeat("x", MaxRepairBytes) + `",},}`
	if res := ParseStage2(reply, spec, askedFields("instruction", "language", "maxWords"), reg); len(res.Problems) != 0 {
		t.Errorf("large reply with trailing commas: %.200q", res.Problems)
	}
}
