package react_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// thirtyStepResult is step n's result: about 400 characters of figures.
func thirtyStepResult(n int) string {
	s := fmt.Sprintf("Region %d: revenue %d.4 million, costs %d.1 million, margin moved %d points; the supplier delay cost %d days. ", n, 10+n, 7+n, n%5, n%9)
	for len(s) < 400 {
		s += "Orders were steady, returns fell and the backlog cleared by the end of the quarter. "
	}
	return s[:400]
}

// thirtyStepModel answers a 30-step round (29 echoes of a 400-character
// result, then complete) by stage, the way a capable model answers the
// templates.
func thirtyStepModel() *scripted.Model {
	var mu sync.Mutex
	step := 0
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		switch req.Stage {
		case workflow.StageOne:
			step++
			return thirtyStepSelection(step), nil
		case workflow.StageCompact:
			return fmt.Sprintf("Regions 1 to %d are recorded; each result has revenue, costs and margin.", step-3), nil
		}
		if step == 30 {
			return enginetest.Params(map[string]any{"message": "All 29 regions recorded."}), nil
		}
		return enginetest.Params(map[string]any{"text": thirtyStepResult(step)}), nil
	}}
}

// thirtyStepSelection is the Stage 1 reply of step n as a capable model
// writes it for the templates: an objective of one sentence, a learning
// only when the last result taught something new, a context with the
// facts Stage 2 needs (not the value it writes) and fields by name.
func thirtyStepSelection(n int) string {
	sel := map[string]any{
		"action": enginetest.Echo, "actionObjective": fmt.Sprintf("Record region %d's figures.", n),
		"learnings": []string{}, "requiredInputDocuments": []string{}, "requiredConnection": nil,
		"parametersContext": fmt.Sprintf("Region %d of the quarterly figures; record its full result.", n),
		"parametersSchema":  map[string]any{"fields": []map[string]any{{"name": "text"}}},
	}
	if n%10 == 2 {
		sel["learnings"] = []string{"Every region's result has the same layout."}
	}
	if n == 30 {
		sel["action"], sel["actionObjective"] = workflow.CompleteAction, "Answer the user with the summary."
		sel["parametersContext"] = "29 regions recorded; revenue rose from 11.4 to 39.4 million."
		sel["parametersSchema"] = map[string]any{"fields": []map[string]any{{"name": "message"}}}
	}
	b, _ := json.Marshal(sel)
	return string(b)
}

// Stage 1 forgets nothing and is marked for the cache (DESIGN §11.1):
// over a 30-step round whose steps each produce a 400-character result,
// with the default budgets, the prompt at step 30 still shows every
// step's result (in the sealed section's one-line entries), and its
// second cache mark follows the documents index. The sizes of every
// step's prompts and of the replies are logged (go test -run
// TestStage1Bounded -v).
func TestStage1Bounded(t *testing.T) {
	t.Parallel()
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			t.Parallel()
			sm := thirtyStepModel()
			var model workflow.Model = sm
			if native {
				model = nativeModel{sm}
			}
			modes := map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(newBuilderWith(t, prompts.Options{}))}
			e := enginetest.StartEngine(t, testConfig("bounded"), newStore(), model, enginetest.NewRegistry(), modes)
			wf := create(t, e, "Go through the quarterly figures region by region, record each, then summarise.", 30)
			if got := wait(t, e, wf.ID); got.Status != workflow.StatusCompleted || got.Step != 30 {
				t.Fatalf("round ended %s at step %d (%s)", got.Status, got.Step, got.StopReason)
			}
			logSizes(t, sm.Calls())
			var last scripted.Call
			for _, c := range sm.Calls() {
				if c.Stage == workflow.StageOne {
					last = c
				}
			}
			var prompt strings.Builder
			for _, m := range last.Messages {
				prompt.WriteString(m.Content)
			}
			for n := 1; n < 30; n++ {
				if want := fmt.Sprintf("Region %d: revenue %d.4 million", n, 10+n); !strings.Contains(prompt.String(), want) {
					t.Errorf("Stage 1's prompt at step 30 lacks step %d's result %q", n, want)
				}
			}
			if last.CacheSealed <= last.CachePrefix || last.CacheSealed >= len(last.Messages) {
				t.Errorf("Stage 1's cache marks at %d and %d of %d messages, want the second after the first, before the last",
					last.CachePrefix, last.CacheSealed, len(last.Messages))
			}
		})
	}
}

// logSizes logs the characters of each step's prompts and of the replies
// of calls, and returns the Stage 1 prompt sizes.
func logSizes(t *testing.T, calls []scripted.Call) []int {
	var s1, s2 []int
	out, in, count := map[workflow.Stage]int{}, map[workflow.Stage]int{}, map[workflow.Stage]int{}
	prefix, from3 := 0, 0 // Stage 1 from step 3 on: the cacheable prefix's characters, all characters
	for _, c := range calls {
		n, p := 0, 0
		for i, m := range c.Messages {
			n += len(m.Content)
			if i < c.CachePrefix {
				p += len(m.Content)
			}
		}
		if c.Stage == workflow.StageOne && len(s1) >= 2 {
			prefix, from3 = prefix+p, from3+n
		}
		out[c.Stage] += len(c.Reply)
		in[c.Stage] += n
		count[c.Stage]++
		switch c.Stage {
		case workflow.StageOne:
			s1 = append(s1, n)
		case workflow.StageTwo:
			s2 = append(s2, n)
		}
	}
	var b strings.Builder
	for i, n := range s1 {
		fmt.Fprintf(&b, "step %2d: stage1 %5d chars", i+1, n)
		if i < len(s2) {
			fmt.Fprintf(&b, ", stage2 %4d chars", s2[i])
		}
		b.WriteByte('\n')
	}
	t.Logf("prompt sizes:\n%sprompts: stage1 %d, stage2 %d, %d compactions %d chars; replies: stage1 %d, stage2 %d, compact %d chars; "+
		"step 30 / step 1 = %.2f; Stage 1 from step 3: %.0f%% in the cacheable prefix",
		b.String(), in[workflow.StageOne], in[workflow.StageTwo], count[workflow.StageCompact], in[workflow.StageCompact],
		out[workflow.StageOne], out[workflow.StageTwo], out[workflow.StageCompact], float64(s1[len(s1)-1])/float64(s1[0]),
		100*float64(prefix)/float64(from3))
	return s1
}
