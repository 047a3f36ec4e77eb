package wiring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// printRun prints each step of the finished round from the store: Stage
// 1's choice, Stage 2's prompt size beside Stage 1's, the parameters it
// filled and those it did not take from what it was shown, the action
// message with its summary, and the final answer; verbose adds the
// WORKFLOW_HISTORY each Stage 1 prompt rendered, newest entry first.
func printRun(ctx context.Context, w io.Writer, store workflow.Store, wf *workflow.Workflow, verbose bool) error {
	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		return fmt.Errorf("read traces: %w", err)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	for step := 1; step <= wf.Step; step++ {
		s1, s2 := lastTrace(traces, step, workflow.StageOne), lastTrace(traces, step, workflow.StageTwo)
		if s1 == nil {
			continue
		}
		var sel workflow.Selection
		_ = json.Unmarshal(s1.Parsed, &sel)
		fmt.Fprintf(w, "step %d  stage 1 chose %s: %s\n", step, orString(sel.Action, "(rejected)"), sel.ActionObjective)
		if verbose {
			fmt.Fprintf(w, "        stage 1 saw this history (newest first):\n")
			for _, line := range strings.Split(history(s1.Prompt), "\n") {
				fmt.Fprintf(w, "          | %s\n", line)
			}
		}
		if s2 != nil {
			n1, n2 := promptSize(s1.Prompt), promptSize(s2.Prompt)
			fmt.Fprintf(w, "        stage 2 prompt %d chars beside stage 1's %d (%.0f%%)\n", n2, n1, 100*float64(n2)/float64(max(n1, 1)))
			var filled struct {
				Parameters json.RawMessage `json:"parameters"`
			}
			if json.Unmarshal(s2.Parsed, &filled) == nil && len(filled.Parameters) > 0 {
				fmt.Fprintf(w, "        stage 2 filled %s\n", textclip.OneLine(string(filled.Parameters)))
			}
			if len(s2.Ungrounded) > 0 {
				fmt.Fprintf(w, "        stage 2 ungrounded (in neither objective nor context): %s\n", strings.Join(s2.Ungrounded, ", "))
			}
		}
		for _, m := range msgs {
			if m.Round != wf.Round || m.Step != step || m.Role == workflow.RoleUser {
				continue
			}
			switch m.Role {
			case workflow.RoleAction:
				fmt.Fprintf(w, "        action %s [%s]: %s\n", m.Action, m.Status, textclip.OneLine(m.Summary))
				for _, d := range m.Documents {
					fmt.Fprintf(w, "          -> %s (%s, %d bytes)\n", d.Name, d.MimeType, d.Size)
				}
			case workflow.RoleAssistant:
				fmt.Fprintf(w, "\nfinal answer:\n  %s\n", m.Text)
			}
		}
	}
	fmt.Fprintf(w, "\nstatus %s (stop reason %s); %d model calls, %d prompt + %d completion tokens, %d actions\n",
		wf.Status, wf.StopReason, wf.Stats.LLMCalls, wf.Stats.PromptTokens, wf.Stats.CompletionTokens, wf.Stats.Actions)
	if wf.Status != workflow.StatusCompleted {
		return fmt.Errorf("the demo round ended %s (%s): %s", wf.Status, wf.StopReason, wf.Error)
	}
	return nil
}

// history is the history a rendered Stage 1 prompt showed, as one list
// newest first: its latest section, then its sealed one (or the single
// list of the single layout).
func history(prompt []workflow.PromptMessage) string {
	var latest, sealed, single string
	for _, m := range prompt {
		// Each section ends at its first blank line.
		for head, into := range map[string]*string{"# Latest steps (newest first)\n": &latest,
			"# Earlier steps (newest first)\n": &sealed, "# Workflow history (newest first)\n": &single} {
			if _, rest, ok := strings.Cut(m.Content, head); ok {
				*into, _, _ = strings.Cut(rest, "\n\n")
			}
		}
	}
	var parts []string
	for _, s := range []string{single, latest, sealed} {
		if s != "" && s != "(none)" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "(none rendered)"
	}
	return strings.Join(parts, "\n")
}

func lastTrace(ts []workflow.Trace, step int, stage workflow.Stage) *workflow.Trace {
	var found *workflow.Trace
	for i := range ts {
		if ts[i].Step == step && ts[i].Stage == stage {
			found = &ts[i]
		}
	}
	return found
}

func promptSize(p []workflow.PromptMessage) int {
	n := 0
	for _, m := range p {
		n += len(m.Content)
	}
	return n
}
