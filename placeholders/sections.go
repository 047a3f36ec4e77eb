package placeholders

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// DefaultLatestBudget is the latest section's size, in characters, past
// which its entries are sealed (Limits.Latest 0). Chosen by the bench's
// cost table (docs/prompts.md): a smaller one seals more often, and each
// seal re-sends the sealed section uncached; a larger one leaves more of
// every step after the cached prefix.
const DefaultLatestBudget = 3000

// Limits bounds Stage 1's history (DESIGN §11.1).
type Limits struct {
	// History bounds the sealed section (with the compaction summary), in
	// characters; 0 means DefaultHistoryBudget.
	History int
	// Latest is the latest section's size, in characters, past which its
	// entries are sealed; 0 means DefaultLatestBudget.
	Latest int
}

func (l Limits) latest() int {
	if l.Latest <= 0 {
		return DefaultLatestBudget
	}
	return l.Latest
}

// Sections is Stage 1's history in its two sections (DESIGN §11.1): the
// sealed section (WORKFLOW_HISTORY_SEALED), one line per entry, newest
// first, then the compaction summary, which stays byte-identical from
// seal to seal; and the latest section (WORKFLOW_HISTORY_LATEST), the
// entries since the last seal in full, newest first.
type Sections struct {
	// Latest are the latest section's entries, newest first.
	Latest []string
	// Sealed are the sealed section's one-line entries, newest first;
	// Omitted the line saying how many older ones did not fit ("": none,
	// else it starts with a newline when lines precede it) and Summary the
	// compaction summary's block ("": none).
	Sealed           []string
	Omitted, Summary string
}

// noneYet is a section without entries.
const noneYet = "(none)"

// SealedText is the WORKFLOW_HISTORY_SEALED value.
func (s Sections) SealedText() string {
	if len(s.Sealed) == 0 && s.Omitted == "" && s.Summary == "" {
		return noneYet
	}
	return strings.Join(s.sealedPieces(nil), "")
}

// LatestText is the WORKFLOW_HISTORY_LATEST value.
func (s Sections) LatestText() string {
	if len(s.Latest) == 0 {
		return noneYet
	}
	return strings.Join(s.Latest, "\n")
}

// Single is the WORKFLOW_HISTORY value: both sections as one list, newest
// first (the latest entries, then the sealed ones, then the summary), or
// "(no history yet)".
func (s Sections) Single() string {
	var buf [160]string
	return strings.Join(s.SinglePieces(buf[:0]), "")
}

// SinglePieces is Single in pieces, appended to buf.
func (s Sections) SinglePieces(buf []string) []string {
	if len(s.Latest) == 0 && len(s.Sealed) == 0 && s.Omitted == "" && s.Summary == "" {
		return append(buf, "(no history yet)")
	}
	for i, e := range s.Latest {
		if i > 0 {
			buf = append(buf, "\n")
		}
		buf = append(buf, e)
	}
	if len(s.Latest) > 0 && (len(s.Sealed) > 0 || s.Omitted != "" || s.Summary != "") {
		buf = append(buf, "\n")
	}
	return s.sealedPieces(buf)
}

func (s Sections) sealedPieces(buf []string) []string {
	for i, e := range s.Sealed {
		if i > 0 {
			buf = append(buf, "\n")
		}
		buf = append(buf, e)
	}
	omitted := s.Omitted
	if len(s.Sealed) == 0 {
		omitted = strings.TrimPrefix(omitted, "\n")
	}
	if omitted != "" {
		buf = append(buf, omitted)
	}
	if s.Summary != "" {
		if len(s.Sealed) > 0 || omitted != "" {
			buf = append(buf, "\n")
		}
		buf = append(buf, s.Summary)
	}
	return buf
}

// HistorySections returns the history of msgs in its two sections within
// limits; Cache.Sections memoizes.
func HistorySections(msgs []workflow.Message, limits Limits) Sections {
	return (*Cache)(nil).Sections(msgs, limits)
}

// Sections returns the history of msgs in its two sections within limits.
//
// Entries are the messages after the ones the newest compaction summary
// covers (all of them without one), ordered by round, then seq, both
// descending. Which of them are sealed follows from the messages alone
// (sealedFrom), so every render of the same messages splits them alike:
// the sealed section changes only at a seal. It is bounded by
// limits.History: when its lines and the summary do not fit (compaction
// is off or failed), its oldest lines are left out with a line saying how
// many.
func (c *Cache) Sections(msgs []workflow.Message, limits Limits) Sections {
	budget := historyBudget(limits.History)
	var buf [64]int
	v := viewOf(msgs, buf[:0])
	pos := c.lockPositions(msgs)
	defer pos.unlock()
	latest := c.latestCount(pos, v, limits.latest())
	var s Sections
	for k := range latest {
		s.Latest = append(s.Latest, c.entryAt(pos, msgs, v.order.At(k)).text)
	}
	room := budget
	if v.prev != nil {
		s.Summary = pos.summaryBlock(v.prev, msgs, SummaryBudget(budget))
		room -= utf8.RuneCountInString(s.Summary) + 1
	}
	var stack [64]entry
	lines := stack[:0]
	for k := latest; k < v.order.Len(); k++ {
		lines = append(lines, c.entryAt(pos, msgs, v.order.At(k)).oneLine())
	}
	kept, omitted := boundLines(lines, room)
	for _, e := range kept {
		s.Sealed = append(s.Sealed, e.text)
	}
	s.Omitted = omitted
	return s
}

// latestCount returns how many of v's entries, newest first, are in the
// latest section: those from the last seal on (sealedFrom).
func (c *Cache) latestCount(pos *positions, v view, latestBudget int) int {
	round, seq, ok := c.sealedFrom(pos, v.msgs, latestBudget)
	if !ok {
		return v.order.Len()
	}
	n := 0
	for n < v.order.Len() {
		m := v.at(n)
		if m.Round < round || m.Round == round && m.Seq < seq {
			break
		}
		n++
	}
	return n
}

// sealedFrom returns the round and seq of the oldest message of the
// latest section. Walking every message but the summaries oldest first, a
// seal happens before a message that starts a new round, and before one
// whose full entry would take the entries since the last seal past
// latestBudget characters; the latest section holds the messages since
// the last seal. ok is false when there are no messages.
func (c *Cache) sealedFrom(pos *positions, msgs []workflow.Message, latestBudget int) (round int, seq int64, ok bool) {
	var buf [64]int
	order := chronological(msgs, buf[:0])
	used := 0
	for _, i := range order {
		m := &msgs[i]
		if m.Role == workflow.RoleSummary {
			continue
		}
		runes := c.entryAt(pos, msgs, i).runes
		if !ok || m.Round != round || used > 0 && used+1+runes > latestBudget {
			round, seq, ok, used = m.Round, m.Seq, true, 0
		}
		if used > 0 {
			used++
		}
		used += runes
	}
	return round, seq, ok
}

// chronological returns the indexes of msgs ordered by round, then seq
// (equal keys in slice order): nil order stands for the slice's own when
// it is so ordered already (the common case), else buf holds them.
func chronological(msgs []workflow.Message, buf []int) []int {
	idx := buf[:0]
	sorted := true
	for i := range msgs {
		idx = append(idx, i)
		if i > 0 && (msgs[i].Round < msgs[i-1].Round || msgs[i].Round == msgs[i-1].Round && msgs[i].Seq < msgs[i-1].Seq) {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(idx, func(a, b int) int {
			if msgs[a].Round != msgs[b].Round {
				return msgs[a].Round - msgs[b].Round
			}
			switch {
			case msgs[a].Seq < msgs[b].Seq:
				return -1
			case msgs[a].Seq > msgs[b].Seq:
				return 1
			}
			return 0
		})
	}
	return idx
}
