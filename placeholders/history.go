package placeholders

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// textExcerpt bounds the text shown for user and assistant messages.
const textExcerpt = 400

// shortExcerpt bounds each text a one-line entry quotes.
const shortExcerpt = 120

// fullRoom is how many runes of a history within budget (0: the default)
// the newest entries take in full: three eighths of it, half of what is
// left once a compaction summary's share is reserved. Older entries are
// shown in one line each (writeShortEntry), so the history grows by a line
// a step, not by a step's whole result, until compaction folds them in.
func fullRoom(budget int) int {
	budget = historyBudget(budget)
	return (budget - SummaryBudget(budget)) / 2
}

// former picks each entry's form, newest first: in full while the full
// entries fit their room (the newest always), then one line each.
type former struct {
	room, used int
	short      bool
}

// form returns the n-th entry (newest first) in the form it is shown in.
func (f *former) form(n int, e entry) entry {
	if !f.short && (n == 0 || f.used+e.runes <= f.room) {
		f.used += e.runes
		return e
	}
	f.short = true
	return e.oneLine()
}

// History returns the WORKFLOW_HISTORY value. Entries are
// reverse-chronological: the messages of the current round newest to
// oldest, then earlier rounds, newest round first (messages are ordered by
// round, then seq, both descending; equal seqs keep reverse slice order).
// Each entry shows role, round, step, action, status, objective, its
// documentsLabel and document references, summary, findings and learnings;
// the newest entries in full while they fit three eighths of the budget
// (the newest always), the older ones in one line each (role, step,
// action, status, objective, their docList reference and learnings, each
// cut short).
//
// budget bounds the result in characters (runes); 0 means
// DefaultHistoryBudget and smaller budgets are raised to MinHistoryBudget. When the entries do not fit, the oldest are dropped
// first and a last line says how many were omitted; the newest entry alone
// is cut to fit rather than dropped. Only the entries that fit are
// rendered, so the cost grows with the budget, not with the history.
//
// When the workflow has a compaction summary (a message of role summary,
// see Compaction), only the messages after the ones it covers are entries,
// and the newest summary is the last (oldest) entry, fenced as data, in at
// most SummaryBudget(budget) characters; the other entries share the rest.
//
// History renders every entry afresh; Cache.History memoizes.
func History(msgs []workflow.Message, budget int) string {
	return (*Cache)(nil).History(msgs, budget)
}

// History is the package-level History, memoized in c.
func (c *Cache) History(msgs []workflow.Message, budget int) string {
	var buf [160]string
	return strings.Join(c.HistoryPieces(msgs, budget, buf[:0]), "") // one allocation of the exact size
}

// HistoryPieces returns History(msgs, budget) in pieces, to be written one
// after the other (templates.Template.RenderPieces): the entries are not
// joined into a string of their own. buf is room for the pieces.
func HistoryPieces(msgs []workflow.Message, budget int, buf []string) []string {
	return (*Cache)(nil).HistoryPieces(msgs, budget, buf)
}

// HistoryPieces is the package-level HistoryPieces, memoized in c.
func (c *Cache) HistoryPieces(msgs []workflow.Message, budget int, buf []string) []string {
	var stack [64]entry
	whole, kept, omitted, block := c.history(msgs, budget, stack[:0])
	if whole != "" {
		return append(buf, whole)
	}
	for i, e := range kept {
		if i > 0 {
			buf = append(buf, "\n")
		}
		buf = append(buf, e.text)
	}
	if omitted != "" {
		buf = append(buf, omitted)
	}
	if block != "" {
		buf = append(buf, "\n", block)
	}
	return buf
}

// history renders the history of msgs (see History) into kept (room for
// the entries): whole when it has no entries; else the kept entries
// (newest first, to be joined by newlines), the omitted line ("": none)
// and the summary block ("": none), which follows a newline. The results
// are apart so that kept's room can stay on the caller's stack.
func (c *Cache) history(msgs []workflow.Message, budget int, room []entry) (whole string, kept []entry, omitted, block string) {
	budget = historyBudget(budget)
	var buf [64]int
	v := viewOf(msgs, buf[:0])
	pos := c.lockPositions(msgs)
	defer pos.unlock()
	if v.order.Len() == 0 && v.prev == nil {
		return "(no history yet)", nil, "", ""
	}
	if v.prev == nil {
		kept, omitted = c.renderHistory(pos, v, budget, fullRoom(budget), room)
		return "", kept, omitted, ""
	}
	block = pos.summaryBlock(v.prev, msgs, SummaryBudget(budget))
	if v.order.Len() == 0 {
		return block, nil, "", ""
	}
	kept, omitted = c.renderHistory(pos, v, budget-utf8.RuneCountInString(block)-1, fullRoom(budget), room)
	return "", kept, omitted, block
}

// historyBudget resolves a configured budget: 0 → DefaultHistoryBudget,
// never below MinHistoryBudget.
func historyBudget(budget int) int {
	if budget <= 0 {
		budget = DefaultHistoryBudget
	}
	return max(budget, MinHistoryBudget)
}

// renderHistory renders v's entries (at least one) newest first within
// budget runes into kept (its room), the newest in full within full runes
// and the older in one line (former), dropping the oldest entries with an
// omitted line (returned with them; "": none) when they do not fit. Each
// entry comes from the caches (pos: the workflow's positions, locked; see
// positions.entry).
func (c *Cache) renderHistory(pos *positions, v view, budget, full int, kept []entry) ([]entry, string) {
	used := 0 // runes of the kept entries and their separators
	f := former{room: full}
	for n := range v.order.Len() {
		e := f.form(n, c.entryAt(pos, v.msgs, v.order.At(n)))
		runes := e.runes
		if n > 0 {
			runes++ // the newline before the entry
		}
		if used+runes > budget {
			if n == 0 { // the newest entry alone is cut to fit
				e.text = textclip.ClipRunes(e.text, budget)
				e.runes = utf8.RuneCountInString(e.text)
				kept, used = append(kept, e), e.runes
			}
			break
		}
		used += runes
		kept = append(kept, e)
	}
	omitted := v.order.Len() - len(kept)
	if omitted == 0 {
		return kept, ""
	}
	// Drop more entries until the omitted line fits too (keep the newest,
	// cut if need be).
	for len(kept) > 1 && used+omittedLen(omitted) > budget {
		used -= kept[len(kept)-1].runes + 1
		kept = kept[:len(kept)-1]
		omitted++
	}
	if used+omittedLen(omitted) > budget {
		// kept is the newest entry alone (perhaps cut already).
		e := kept[0]
		e.text = textclip.ClipRunes(e.text, budget-omittedLen(omitted))
		kept[0] = e
	}
	return kept, omittedLine(omitted)
}

func omittedLine(n int) string {
	return "\n(" + workflow.Count(n, "older entry", "older entries") + " omitted)"
}

func omittedLen(n int) int { return len(omittedLine(n)) }

// writeEntry renders one history entry.
func writeEntry(b *bytes.Buffer, m *workflow.Message) {
	if writeHeading(b, m, textExcerpt) && m.ActionObjective != "" {
		b.WriteString("\n  objective: ")
		b.WriteString(textclip.OneLine(m.ActionObjective))
	}
	writeDocuments(b, m)
	if m.Role == workflow.RoleAction {
		summary, data := splitSummary(*m)
		if summary != "" {
			b.WriteString("\n  summary: ")
			b.WriteString(textclip.OneLine(summary))
		}
		if data != "" {
			b.WriteString("\n  findings: ")
			b.WriteString(fenceData(textclip.OneLine(data)))
		}
	}
	if len(m.Learnings) > 0 {
		b.WriteString("\n  learnings: ")
		for i, l := range m.Learnings {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(textclip.OneLine(l))
		}
	}
}

// writeShortEntry renders m's one-line entry: who, round and step, the
// action and its status, then cut short the objective (or the text), the
// docList reference of its documents by label and its learnings. An
// action's result is left out: it is data the full entry fences, and the
// summary of a compaction carries what mattered.
func writeShortEntry(b *bytes.Buffer, m *workflow.Message) {
	if writeHeading(b, m, shortExcerpt) && m.ActionObjective != "" {
		b.WriteString("; ")
		b.WriteString(textclip.Excerpt(m.ActionObjective, shortExcerpt))
	}
	if len(m.Documents) > 0 {
		fmt.Fprintf(b, "; documents: docList:%s:%s", m.ID, m.DocumentsLabel)
	}
	if len(m.Learnings) > 0 {
		b.WriteString("; learnings: ")
		b.WriteString(textclip.Excerpt(strings.Join(m.Learnings, "; "), shortExcerpt))
	}
}

// writeHeading writes an entry's first line: a user's or the
// assistant's text cut to excerpt, or a step's action ("(none chosen)"
// when it has none) and status (success when unset). It reports whether
// the entry is a step's, whose objective the caller writes next.
func writeHeading(b *bytes.Buffer, m *workflow.Message, excerpt int) bool {
	switch m.Role {
	case workflow.RoleUser:
		fmt.Fprintf(b, "- [round %d] user: %s", m.Round, textclip.Excerpt(m.Text, excerpt))
		return false
	case workflow.RoleAssistant:
		fmt.Fprintf(b, "- [round %d, step %d] assistant: %s", m.Round, m.Step, textclip.Excerpt(m.Text, excerpt))
		return false
	}
	fmt.Fprintf(b, "- [round %d, step %d] action %s: %s", m.Round, m.Step,
		cmp.Or(m.Action, "(none chosen)"), cmp.Or(m.Status, workflow.MessageSuccess))
	return true
}

// writeDocuments renders the documents line: the label, the docList
// reference and each docItem reference.
func writeDocuments(b *bytes.Buffer, m *workflow.Message) {
	if len(m.Documents) == 0 {
		return
	}
	fmt.Fprintf(b, "\n  documents: %s -> docList:%s:%s (", m.DocumentsLabel, m.ID, m.DocumentsLabel)
	for i, d := range m.Documents {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "docItem:%s:%s", d.ID, textclip.OneLine(d.Name))
	}
	b.WriteString(")")
}

// splitSummary separates what an action message says about itself from
// what the action returned: the result text (its findings, or the error
// an upstream answered) is data that Stage 1 must see only inside a data
// fence, so it is cut from the summary ("...; result: <text>",
// "<action> failed: <error>") and returned apart.
func splitSummary(m workflow.Message) (summary, data string) {
	summary = m.Summary
	switch {
	case m.Findings != "":
		if i := strings.Index(summary, "; result: "); i >= 0 {
			summary = summary[:i]
		}
		return summary, m.Findings
	case m.Status == workflow.MessageError && m.Action != "" && strings.HasPrefix(summary, m.Action+" failed: "):
		return m.Action + " failed", strings.TrimPrefix(summary, m.Action+" failed: ")
	}
	return summary, ""
}

// fenceData wraps an action's result text in a data fence whose tag is
// derived from the text, so the text cannot forge its own end marker
// (the way ai.process fences its input documents).
func fenceData(text string) string {
	sum := sha256.Sum256([]byte(text))
	tag := hex.EncodeToString(sum[:4])
	return "<data tag=" + tag + ">" + text + "</data tag=" + tag + ">"
}
