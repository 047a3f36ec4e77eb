package placeholders

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// fenceOverhead is what fenceData adds around a text, in runes.
const fenceOverhead = len("<data tag=01234567>") + len("</data tag=01234567>")

// SummaryBudget is the part of a WORKFLOW_HISTORY budget (0: the default)
// a compaction summary may take: a quarter of it. The compaction call is
// asked for at most this many characters, less the entry's own heading.
func SummaryBudget(budget int) int { return historyBudget(budget) / 4 }

// SummaryTextLimit is how many characters a compaction summary's text may
// have so that its history entry fits SummaryBudget(budget).
func SummaryTextLimit(budget int) int {
	return max(SummaryBudget(budget)-len(summaryHeading(99999, 999))-fenceOverhead, 0)
}

// Compaction returns the history entries a compaction must summarise
// before the sealed section is rendered within budget (Limits{History:
// budget}); see Cache.CompactionWithin.
//
// Compaction renders every entry afresh; Cache.Compaction memoizes.
func Compaction(msgs []workflow.Message, budget int) (entries []workflow.Message, previous *workflow.Message) {
	return (*Cache)(nil).Compaction(msgs, budget)
}

// Compaction is the package-level Compaction, memoized in c.
func (c *Cache) Compaction(msgs []workflow.Message, budget int) (entries []workflow.Message, previous *workflow.Message) {
	return c.CompactionWithin(msgs, Limits{History: budget})
}

// CompactionWithin returns the sealed entries a compaction must summarise
// before the sealed section (Sections) is rendered within limits.History,
// oldest first, and the newest summary so far (nil: none), which the new
// summary folds in. It returns no entries when the sealed section's lines
// fit the budget (with the summary's share reserved): nothing would be
// dropped. The sealed section only grows at a seal, so a compaction
// follows a seal, and re-renders the section as a seal does.
//
// Otherwise the entries are the sealed ones that do not fit in half of
// what is left once SummaryBudget is reserved for the new summary: after
// the compaction the section fits, and the other half leaves room for
// several seals before the next compaction. The latest section's entries
// are never among them, nor the newest sealed entry.
func (c *Cache) CompactionWithin(msgs []workflow.Message, limits Limits) (entries []workflow.Message, previous *workflow.Message) {
	budget := historyBudget(limits.History)
	var buf [64]int
	v := viewOf(msgs, buf[:0])
	if v.prevAt >= 0 {
		previous = &msgs[v.prevAt] // v.prev, but not through v: buf stays on the stack
	}
	reserved := budget - SummaryBudget(budget) - 1
	room := budget
	if v.prev != nil {
		room = reserved
	}
	pos := c.lockPositions(msgs)
	latest := c.latestCount(pos, v, limits.latest())
	fits := func(room int) int {
		used := 0
		for k := latest; k < v.order.Len(); k++ {
			used += c.entryAt(pos, msgs, v.order.At(k)).short.runes
			if k > latest {
				used++ // the newline before the entry
			}
			if used > room {
				return k - latest
			}
		}
		return v.order.Len() - latest
	}
	sealed := v.order.Len() - latest
	all, keep := fits(room), max(fits(reserved/2), 1)
	pos.unlock()
	if all == sealed || keep >= sealed {
		return nil, previous
	}
	entries = make([]workflow.Message, 0, sealed-keep) // one allocation: a Message is large
	for k := v.order.Len() - 1; k >= latest+keep; k-- {
		entries = append(entries, *v.at(k))
	}
	return entries, previous
}

// CompactedEntriesFit returns how many of entries (oldest first, at least
// one when there are any) CompactedEntriesText(entries, limit) shows.
func CompactedEntriesFit(entries []workflow.Message, limit int) int {
	return (*Cache)(nil).CompactedEntriesFit(entries, limit)
}

// CompactedEntriesFit is the package-level CompactedEntriesFit, memoized
// in c.
func (c *Cache) CompactedEntriesFit(entries []workflow.Message, limit int) int {
	used := 0
	for n := range entries {
		r := c.renderedEntry(&entries[n]).runes
		if n > 0 {
			r++ // the newline before the entry
		}
		if n > 0 && used+r > limit {
			return n
		}
		used += r
	}
	return len(entries)
}

// CompactedEntriesText renders entries (oldest first) for the compaction
// prompt, as the history renders them, within limit runes: entries past it
// are left out with a line saying how many.
func CompactedEntriesText(entries []workflow.Message, limit int) string {
	return (*Cache)(nil).CompactedEntriesText(entries, limit)
}

// CompactedEntriesText is the package-level CompactedEntriesText,
// memoized in c.
func (c *Cache) CompactedEntriesText(entries []workflow.Message, limit int) string {
	var stack [64]entry
	shown := stack[:0]
	used, size := 0, 0
	for n := range entries {
		e := c.renderedEntry(&entries[n])
		r := e.runes
		if n > 0 {
			r++ // the newline before the entry
		}
		if n > 0 && used+r > limit {
			break
		}
		shown = append(shown, e)
		used += r
		size += len(e.text) + 1
	}
	var left string
	if n := len(entries) - len(shown); n > 0 {
		left = fmt.Sprintf("\n(%s left out: too long to summarise at once)", workflow.Count(n, "later entry", "later entries"))
	}
	var b strings.Builder
	b.Grow(size + len(left)) // the builder grows once, however many entries
	for n, e := range shown {
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.text)
	}
	b.WriteString(left)
	return b.String()
}

// PreviousSummaryText is the PREVIOUS_SUMMARY value: the summary's text, or
// "(none)".
func PreviousSummaryText(prev *workflow.Message) string {
	if prev == nil || prev.Text == "" {
		return "(none)"
	}
	return prev.Text
}

// coveredThrough returns the round and step of the last message prev
// covers (its CompactedThrough), or prev's own when msgs lacks it.
func coveredThrough(prev *workflow.Message, msgs []workflow.Message) (round, step int) {
	for i := range msgs {
		if m := &msgs[i]; m.Seq == prev.CompactedThrough && m.Role != workflow.RoleSummary {
			return m.Round, m.Step
		}
	}
	return prev.Round, prev.Step
}

// renderSummaryBlock is summaryBlock for a summary text covering through
// round and step.
func renderSummaryBlock(text string, round, step, limit int) string {
	head := summaryHeading(round, step)
	room := limit - utf8.RuneCountInString(head) - fenceOverhead
	if room < 20 {
		return textclip.ClipRunes(head+"(left out: the history budget is too small)", limit)
	}
	return head + fenceData(textclip.ClipRunes(textclip.OneLine(text), room))
}

func summaryHeading(round, step int) string {
	return fmt.Sprintf("- summary of the history through round %d, step %d: ", round, step)
}

// CompactionWithin is Cache.CompactionWithin rendering every entry afresh.
func CompactionWithin(msgs []workflow.Message, limits Limits) (entries []workflow.Message, previous *workflow.Message) {
	return (*Cache)(nil).CompactionWithin(msgs, limits)
}
