package prompts

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// compactInputFactor bounds the compaction prompt's entries at this many
// history budgets.
const compactInputFactor = 4

// CompactInput is what the compaction prompt is rendered from.
type CompactInput struct {
	// Workflow gives the current round (for USER_PROMPT); Messages are the
	// workflow's messages in seq order.
	Workflow *workflow.Workflow
	Messages []workflow.Message
	// Entries are the history entries to summarise, oldest first, and
	// Previous the summary they extend (nil: none): Compaction's results.
	Entries  []workflow.Message
	Previous *workflow.Message
	Template *templates.Template
}

// Compaction returns the history entries a compaction call must summarise
// before the next Stage 1 prompt, oldest first, and the summary it folds in
// (see placeholders.Compaction); no entries when compaction is off
// (Options.NoCompaction) or the history fits its budget. The entries are
// those the compaction prompt can show (at most four history budgets of
// them, the oldest first): the later ones stay in the history, shown or
// counted as omitted, until the next compaction reads them.
func (b *Builder) Compaction(msgs []workflow.Message) ([]workflow.Message, *workflow.Message) {
	if b.opts.NoCompaction {
		return nil, nil
	}
	entries, prev := b.placeholders.CompactionWithin(msgs, b.limits())
	// Only the entries the prompt can show (Compact) are summarised and
	// leave the history; the others wait for the next compaction rather
	// than leave it unread.
	return entries[:b.placeholders.CompactedEntriesFit(entries, b.compactInputLimit())], prev
}

// compactInputLimit bounds the entries a compaction prompt shows, in
// characters: four history budgets (of at least 2,000 characters).
func (b *Builder) compactInputLimit() int {
	budget := b.opts.HistoryBudget
	if budget <= 0 {
		budget = placeholders.DefaultHistoryBudget
	}
	return compactInputFactor * max(budget, minCompactBudget)
}

// minCompactBudget is the least history budget compactInputLimit counts.
const minCompactBudget = 2000

// SummaryLimit is the most characters a compaction summary may have.
func (b *Builder) SummaryLimit() int { return placeholders.SummaryTextLimit(b.opts.HistoryBudget) }

// Compact renders the compaction prompt (template "compact"): the round's
// user prompt, the previous summary, the entries to summarise (at most four
// history budgets of them) and the summary's size limit.
func (b *Builder) Compact(in CompactInput) (Rendered, error) {
	limit := b.compactInputLimit()
	return b.render(templates.Compact, in.Template, map[string]string{
		templates.KeyUserPrompt:       placeholders.UserPromptText(in.Messages, currentRound(Stage1Input{Workflow: in.Workflow, Messages: in.Messages})),
		templates.KeyPreviousSummary:  placeholders.PreviousSummaryText(in.Previous),
		templates.KeyCompactedEntries: b.placeholders.CompactedEntriesText(in.Entries, limit),
		templates.KeySummaryLimit:     strconv.Itoa(b.SummaryLimit()),
	})
}

// ParseSummary reads a compaction reply: plain text (capped at
// MaxReplyBytes before any work), a code fence around it stripped, cut to
// limit characters. An empty summary is rejected (problem
// set). parsed is what the trace records.
func ParseSummary(reply string, limit int) (text string, parsed json.RawMessage, problem string) {
	reply = textclip.Cut(reply, MaxReplyBytes)
	text = strings.TrimSpace(reply)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(text, "```")
		if i := strings.IndexByte(text, '\n'); i >= 0 && !strings.Contains(text[:i], " ") {
			text = text[i+1:] // the fence's info string
		}
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "```"))
	}
	if text == "" {
		return "", nil, "the summary is empty: write the summary as plain text"
	}
	if utf8.RuneCountInString(text) > limit {
		text = strings.TrimSpace(textclip.CutRunes(text, limit-1)) + textclip.Ellipsis
	}
	parsed, _ = json.Marshal(map[string]string{"summary": text})
	return text, parsed, ""
}
