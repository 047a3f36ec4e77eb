package prompts

import (
	"fmt"
	"strings"
	"testing"
)

// A reply crammed with bad entries must not turn into feedback that grows
// with it: the problem lines are persisted in the checkpoint and sent back
// in the retry prompt, so they are capped at MaxProblems plus one line
// counting the rest.
func TestProblemsAreCapped(t *testing.T) {
	t.Parallel()
	refs := make([]string, 3000)
	fields := make([]string, 1000)
	for i := range refs {
		refs[i] = fmt.Sprintf("%q", fmt.Sprintf("docItem:d_%d", i))
	}
	for i := range fields {
		fields[i] = fmt.Sprintf(`{"name": "f%d", "type": "date"}`, i)
	}
	tests := []struct {
		name, reply string
		total       int
	}{
		{"references", `{"action": "crm.lookup", "requiredConnection": "crm-prod", "requiredInputDocuments": [` + strings.Join(refs, ",") + `]}`, len(refs)},
		{"fields", `{"action": "crm.lookup", "requiredConnection": "crm-prod", "parametersSchema": {"fields": [` + strings.Join(fields, ",") + `]}}`, len(fields)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := ParseStage1(tc.reply, stage1Env())
			if len(res.Problems) != MaxProblems+1 {
				t.Fatalf("%d problem lines, want %d (capped) + 1", len(res.Problems), MaxProblems)
			}
			want := fmt.Sprintf("and %d more problems", tc.total-MaxProblems)
			if last := res.Problems[MaxProblems]; !strings.Contains(last, want) {
				t.Errorf("last line %q, want it to say %q", last, want)
			}
			if n := len(Feedback(res.Problems)); n > 32<<10 {
				t.Errorf("feedback is %d bytes, want it bounded", n)
			}
		})
	}
}
