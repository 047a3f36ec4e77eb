package wiring

import (
	"fmt"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
)

// promptBuilder is the builder over the configured templates and limits:
// the one the gateway's modes render with, and the one `gateway qualify`
// scores a model through, so both see the same prompts.
func (c *Config) promptBuilder() (*prompts.Builder, error) {
	set, err := templates.Load(c.File.Templates.OverrideDir)
	if err != nil {
		return nil, fmt.Errorf("templates.Load: %w", err)
	}
	l := c.File.Limits
	return prompts.NewBuilder(set, prompts.Options{HistoryBudget: l.HistoryBudget, LatestBudget: l.LatestBudget,
		DocumentsIndexBudget: l.DocumentsIndexBudget, HistoryLayout: prompts.HistoryLayout(l.HistoryLayout), LoopRepeats: l.loopRepeats(),
		NoCompaction: l.Compaction != nil && !*l.Compaction}), nil
}
