package placeholders

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// maxCachedEntryBytes is the longest rendered entry the cache keeps; a
// longer one (an action that returned a large result) is rendered each time
// rather than held, so the cache stays small whatever the actions return.
const maxCachedEntryBytes = 16 << 10

// entry is one rendered history entry: its text (without the newline that
// separates it from the entry before it) and its length in runes, and the
// same for its one-line form (writeShortEntry), which the history shows
// for older entries.
type entry struct {
	text  string
	runes int
	short line
}

// line is a rendered one-line entry and its length in runes.
type line struct {
	text  string
	runes int
}

// oneLine returns e's one-line form as an entry.
func (e entry) oneLine() entry { return entry{text: e.short.text, runes: e.short.runes} }

// cachedEntry is an entry with a copy of every message field the entry is
// rendered from, so a hit is checked against the message's content, not
// only its ID: a message that changed (or another message with the same ID)
// is rendered afresh.
type cachedEntry struct {
	src workflow.Message
	entry
}

// renderedEntry returns m's history entry, from c when m was rendered
// before with the same content (nil c: rendered afresh).
func (c *Cache) renderedEntry(m *workflow.Message) entry {
	e, _ := c.cachedEntryOf(m)
	return e
}

// cachedEntryOf returns m's history entry and its cache record (nil when
// the entry is not cached: no cache, m has no ID, or the entry is too
// long), from c when m was rendered before with the same content.
// Committed messages never change, so each entry is rendered once while
// its workflow runs, instead of once per Stage 1 render and compaction
// check (the history shows up to a budget of the newest entries on every
// step).
func (c *Cache) cachedEntryOf(m *workflow.Message) (entry, *cachedEntry) {
	if c == nil || m.ID == "" {
		return renderEntry(m), nil
	}
	if ce, ok := c.entries.Get(m.ID); ok && sameEntrySource(&ce.src, m) {
		return ce.entry, ce
	}
	e := renderEntry(m)
	if len(e.text) > maxCachedEntryBytes {
		return e, nil
	}
	ce := &cachedEntry{src: entrySource(m), entry: e}
	c.entries.Put(m.ID, ce)
	return e, ce
}

// renderEntry renders m's history entry.
func renderEntry(m *workflow.Message) entry {
	var b bytes.Buffer
	b.Grow(entrySizeHint(m))
	writeEntry(&b, m)
	e := entry{text: b.String(), runes: utf8.RuneCount(b.Bytes())}
	b.Reset()
	writeShortEntry(&b, m)
	e.short = line{text: b.String(), runes: utf8.RuneCount(b.Bytes())}
	return e
}

// entrySizeHint is about the size of m's entry: its texts and the fixed
// parts around them.
func entrySizeHint(m *workflow.Message) int {
	n := 96 + min(len(m.Text), 4*textExcerpt) + len(m.ActionObjective) + len(m.Summary) + len(m.Findings) + len(m.DocumentsLabel)
	for _, d := range m.Documents {
		n += 16 + len(d.ID) + len(d.Name)
	}
	for _, l := range m.Learnings {
		n += 2 + len(l)
	}
	return n
}

// entrySource copies the fields writeEntry reads (and only those, so the
// cache does not keep parameters alive, nor an action's text result, which
// its entry does not show and which may be large), with copies of the
// slices, which a caller could change in place.
func entrySource(m *workflow.Message) workflow.Message {
	src := workflow.Message{
		ID: m.ID, Round: m.Round, Step: m.Step, Role: m.Role, Text: shownText(m),
		Action: m.Action, ActionObjective: m.ActionObjective, Status: m.Status,
		DocumentsLabel: m.DocumentsLabel, Summary: m.Summary, Findings: m.Findings,
		Learnings: slices.Clone(m.Learnings),
	}
	if len(m.Documents) > 0 {
		src.Documents = make([]workflow.Document, len(m.Documents))
		for i, d := range m.Documents {
			src.Documents[i] = workflow.Document{ID: d.ID, Name: d.Name}
		}
	}
	return src
}

// sameEntrySource reports whether m renders the entry src was rendered
// from: every field writeEntry reads is equal. (Equal strings that share
// their bytes, as a workflow's messages do from step to step, compare in
// constant time.)
func sameEntrySource(src, m *workflow.Message) bool {
	if src.ID != m.ID || src.Round != m.Round || src.Step != m.Step || src.Role != m.Role ||
		src.Text != shownText(m) || src.Action != m.Action || src.ActionObjective != m.ActionObjective ||
		src.Status != m.Status || src.DocumentsLabel != m.DocumentsLabel ||
		src.Summary != m.Summary || src.Findings != m.Findings ||
		!slices.Equal(src.Learnings, m.Learnings) || len(src.Documents) != len(m.Documents) {
		return false
	}
	for i, d := range m.Documents {
		if src.Documents[i].ID != d.ID || src.Documents[i].Name != d.Name {
			return false
		}
	}
	return true
}

// shownText is m's Text when its entry shows it (user and assistant
// messages), else "".
func shownText(m *workflow.Message) string {
	if m.Role == workflow.RoleUser || m.Role == workflow.RoleAssistant {
		return m.Text
	}
	return ""
}
