package react_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// recallUploads is the number of uploads of the recall test's round.
const recallUploads = 12

// recallModel answers a round over twelve uploads the way a capable model
// answers the templates, from what each prompt shows: step k (1 to 11)
// echoes upload k, referenced by the docItem the prompt lists for its
// name (no reference shown: the reply names none and is rejected), and
// step 12 completes. It records Stage 1's prompts.
func recallModel() *scripted.Model {
	var mu sync.Mutex
	step := 0
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		switch req.Stage {
		case workflow.StageOne:
			step++
			if step >= recallUploads {
				return enginetest.Select(workflow.CompleteAction, "Answer the user.", nil, "", "message"), nil
			}
			var refs []string
			if ref := docItemOf(promptText(req.Messages), fmt.Sprintf("form-%02d.txt", step)); ref != "" {
				refs = []string{ref}
			}
			return enginetest.Select(enginetest.Echo, fmt.Sprintf("Echo form %d.", step), refs, "", "text"), nil
		case workflow.StageTwo:
			if step >= recallUploads {
				return enginetest.Params(map[string]any{"message": "All forms echoed."}), nil
			}
			text := fmt.Sprintf("Form %d checked.", step)
			if step == 1 {
				text = "The sum of 2 and 3 is 5."
			}
			return enginetest.Params(map[string]any{"text": text}), nil
		}
		return "", fmt.Errorf("unexpected stage %s", req.Stage)
	}}
}

// docItemOf returns the docItem reference prompt shows for the file name
// ("": none).
func docItemOf(prompt, name string) string {
	return regexp.MustCompile(`docItem:[A-Za-z0-9_]+:` + regexp.QuoteMeta(name)).FindString(prompt)
}

func promptText(msgs []workflow.PromptMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// At step 12 of a round over twelve uploads, Stage 1's prompt (the
// gateway's default limits) still holds step 1's result and a docItem
// reference for each upload (DESIGN §11.1): nothing the round found or
// the user uploaded is forgotten — on every store.
func TestStage1RecallsEveryStepAndUpload(t *testing.T) {
	t.Parallel()
	for name, open := range forkStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			model := recallModel()
			modes := map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(newBuilderWith(t, prompts.Options{}))}
			e := enginetest.StartEngine(t, testConfig("recall-"+name), open(t).store, model, enginetest.NewRegistry(), modes)
			var uploads []workflow.DocumentContent
			for n := 1; n <= recallUploads; n++ {
				uploads = append(uploads, workflow.DocumentContent{Document: workflow.Document{Name: fmt.Sprintf("form-%02d.txt", n), MimeType: "text/plain"},
					Content: []byte(fmt.Sprintf("Registration form %d.", n))})
			}
			wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "Echo each attached form, one per step.",
				Mode: workflow.ModeReact, MaxSteps: recallUploads, Documents: uploads})
			if err != nil {
				t.Fatal(err)
			}
			if got := wait(t, e, wf.ID); got.Status != workflow.StatusCompleted || got.Step != recallUploads {
				t.Fatalf("round ended %s at step %d (%s): %s", got.Status, got.Step, got.StopReason, got.Error)
			}
			var stage1 []scripted.Call
			for _, c := range model.Calls() {
				if c.Stage == workflow.StageOne {
					stage1 = append(stage1, c)
				}
			}
			if len(stage1) != recallUploads {
				t.Fatalf("%d Stage 1 calls, want one per step (%d): a reply was rejected", len(stage1), recallUploads)
			}
			prompt := promptText(stage1[recallUploads-1].Messages)
			if !strings.Contains(prompt, "The sum of 2 and 3 is 5.") {
				t.Errorf("Stage 1's prompt at step 12 lacks step 1's result:\n%s", prompt)
			}
			for n := 1; n <= recallUploads; n++ {
				if docItemOf(prompt, fmt.Sprintf("form-%02d.txt", n)) == "" {
					t.Errorf("Stage 1's prompt at step 12 has no docItem reference for form-%02d.txt", n)
				}
			}
		})
	}
}
