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

// shortExcerpt bounds the user's or the assistant's text and the
// learnings a one-line entry quotes.
const shortExcerpt = 120

// lineSummary bounds the summary a one-line entry quotes (DESIGN §11.1).
const lineSummary = 240

// History returns the WORKFLOW_HISTORY value at budget (Limits{History:
// budget}): see Cache.Sections for the two sections it joins.
//
// History renders every entry afresh; Cache.History memoizes.
func History(msgs []workflow.Message, budget int) string {
	return (*Cache)(nil).History(msgs, budget)
}

// History is the package-level History, memoized in c.
func (c *Cache) History(msgs []workflow.Message, budget int) string {
	return c.Sections(msgs, Limits{History: budget}).Single()
}

// HistoryPieces returns History(msgs, budget) in pieces, to be written one
// after the other (templates.Template.RenderPieces). buf is room for the
// pieces.
func HistoryPieces(msgs []workflow.Message, budget int, buf []string) []string {
	return (*Cache)(nil).HistoryPieces(msgs, budget, buf)
}

// HistoryPieces is the package-level HistoryPieces, memoized in c.
func (c *Cache) HistoryPieces(msgs []workflow.Message, budget int, buf []string) []string {
	return c.Sections(msgs, Limits{History: budget}).SinglePieces(buf)
}

// historyBudget resolves a configured budget: 0 → DefaultHistoryBudget,
// never below MinHistoryBudget.
func historyBudget(budget int) int {
	if budget <= 0 {
		budget = DefaultHistoryBudget
	}
	return max(budget, MinHistoryBudget)
}

// boundLines keeps the newest of lines (one-line entries, newest first)
// that fit budget runes with their separating newlines, and returns them
// with the omitted line ("": none) for the oldest ones left out. The
// newest line alone is cut to fit rather than dropped.
func boundLines(lines []entry, budget int) ([]entry, string) {
	used := 0
	kept := lines
	for n, e := range lines {
		runes := e.runes
		if n > 0 {
			runes++ // the newline before the entry
		}
		if used+runes > budget {
			kept = lines[:n]
			break
		}
		used += runes
	}
	omitted := len(lines) - len(kept)
	if omitted == 0 {
		return kept, ""
	}
	for len(kept) > 0 && used+omittedLen(omitted) > budget {
		used -= kept[len(kept)-1].runes
		if len(kept) > 1 {
			used--
		}
		kept = kept[:len(kept)-1]
		omitted++
	}
	return kept, omittedLine(omitted, len(kept) > 0)
}

func omittedLine(n int, after bool) string {
	s := "(" + workflow.Count(n, "older entry", "older entries") + " omitted)"
	if after {
		return "\n" + s
	}
	return s
}

func omittedLen(n int) int { return len(omittedLine(n, true)) }

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

// writeShortEntry renders m's one-line entry (DESIGN §11.1): who,
// round and step, the action and its status, then its summary (the
// result it quotes fenced as data, as in a full entry) in at most
// lineSummary characters, its learnings and the docList reference of its
// documents.
func writeShortEntry(b *bytes.Buffer, m *workflow.Message) {
	if writeHeading(b, m, shortExcerpt) {
		writeLineSummary(b, m)
	}
	if len(m.Learnings) > 0 {
		b.WriteString("; learnings: ")
		b.WriteString(textclip.Excerpt(strings.Join(m.Learnings, "; "), lineSummary))
	}
	if len(m.Documents) > 0 {
		fmt.Fprintf(b, "; documents: docList:%s:%s", m.ID, m.DocumentsLabel)
	}
}

// writeLineSummary writes " — <summary>" for a step's one-line entry: the
// summary without the "<action> succeeded" its heading already says nor
// the documents its docList reference names, and the result (findings, or the error) fenced as data, within lineSummary
// characters; the objective when the step has no summary.
func writeLineSummary(b *bytes.Buffer, m *workflow.Message) {
	summary, data := splitSummary(*m)
	summary = strings.TrimLeft(strings.TrimPrefix(summary, m.Action+" succeeded"), ";: ")
	if len(m.Documents) > 0 { // "N documents (names) as <label>": the docList reference says it
		if _, rest, ok := strings.Cut(summary, " as "+m.DocumentsLabel); ok {
			summary = strings.TrimLeft(rest, ";: ")
		}
	}
	if summary == "" && data == "" {
		summary = m.ActionObjective
	}
	if summary == "" && data == "" {
		return
	}
	b.WriteString(" — ")
	room := lineSummary
	if summary != "" {
		summary = textclip.Excerpt(summary, room)
		b.WriteString(summary)
		room -= utf8.RuneCountInString(summary)
	}
	if data != "" && room > 20 {
		if summary != "" {
			b.WriteString("; ")
		}
		b.WriteString("result: ")
		b.WriteString(fenceData(textclip.Excerpt(data, room-10)))
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
