package react

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// compactMaxTokens bounds the compaction reply: a summary of at most
// SummaryLimit characters needs far fewer tokens than this per character.
func compactMaxTokens(limit int) int { return limit/2 + 256 }

// compact makes the step's history compaction call when the next Stage 1
// prompt would drop history entries (prompts.Builder.Compaction): the model
// summarises the entries about to leave the history, folding in the
// previous summary, and the summary is committed as a message of role
// summary (Run.AppendSummary), after which the step goes on from the same
// phase with a history that fits. ok is false when nothing was done (no
// compaction needed or compaction off). A rejected reply (empty, or cut at
// the token limit) or a model that could not answer persists
// CompactionSkipped: compaction only saves prompt space, so this step's
// Stage 1 drops the oldest entries instead of failing the round, and the
// next step tries again. A cancelled call is returned unchanged.
func (m *Mode) compact(ctx context.Context, run workflow.Run) (ok bool, err error) {
	entries, prev := m.prompts.Compaction(run.Messages())
	if len(entries) == 0 {
		return false, nil
	}
	wf := run.Workflow()
	rendered, err := m.prompts.Compact(prompts.CompactInput{
		Workflow: wf, Messages: run.Messages(), Entries: entries, Previous: prev,
	})
	if err != nil {
		return true, fmt.Errorf("react: rendering the compaction prompt: %w", err)
	}
	limit := m.prompts.SummaryLimit()
	var summary, problem string
	resp, err := run.Generate(ctx, workflow.ModelCall{
		Stage: workflow.StageCompact, Attempt: 1, Template: rendered.Template, Prompt: rendered.Messages,
		MaxTokens: compactMaxTokens(limit),
		Facts:     workflow.PromptFacts{Messages: run.Messages(), Compacted: entries, Previous: prev},
		Check: func(reply string) (json.RawMessage, string) {
			var parsed json.RawMessage
			summary, parsed, problem = prompts.ParseSummary(reply, limit)
			return parsed, problem
		},
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return true, err
	case err != nil || resp.Truncated || problem != "":
		next, err := compactionSkippedCheckpoint()
		if err != nil {
			return true, err
		}
		return true, run.Checkpoint(ctx, next)
	}
	return true, run.AppendSummary(ctx, messages.NewSummary(messages.SummaryInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Text: summary, Entries: entries,
	}))
}
