package placeholders

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// DocumentsIndex returns the AVAILABLE_DOCUMENTS_INDEX value in exactly the
// format of DESIGN §4: every message that carries documents, in the order
// they were created (messages are taken in slice order, which is seq order
// from the store), so a new document is appended and the index before it
// stays byte-identical from step to step (DESIGN §10.1), as
//
//	docList:<messageId>:<documentsLabel>  (N documents)
//	  docItem:<documentId>:<fileName>  <mimeType>, <size>
//
// or "(no documents)". The references are the ones workflow.ParseReference
// accepts and workflow.ResolveDocuments resolves for this workflow. It is
// rendered on every Stage 1 call, so it is written in one buffer sized
// up front.
func DocumentsIndex(msgs []workflow.Message) string {
	size := 0
	for i := range msgs {
		m := &msgs[i]
		if len(m.Documents) == 0 {
			continue
		}
		size += 32 + len(m.ID) + len(m.DocumentsLabel)
		for _, d := range m.Documents {
			size += 32 + len(d.ID) + len(d.Name) + len(d.MimeType)
		}
	}
	if size == 0 {
		return "(no documents)"
	}
	var b strings.Builder
	b.Grow(size)
	var num [32]byte
	for i := range msgs {
		m := &msgs[i]
		if len(m.Documents) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("docList:")
		b.WriteString(m.ID)
		b.WriteByte(':')
		b.WriteString(m.DocumentsLabel)
		b.WriteString("  (")
		if n := len(m.Documents); n == 1 {
			b.WriteString("1 document)") // as workflow.Count says it
		} else {
			b.Write(strconv.AppendInt(num[:0], int64(n), 10))
			b.WriteString(" documents)")
		}
		for _, d := range m.Documents {
			b.WriteString("\n  docItem:")
			b.WriteString(d.ID)
			b.WriteByte(':')
			b.WriteString(textclip.OneLine(d.Name))
			b.WriteString("  ")
			b.WriteString(d.MimeType)
			b.WriteString(", ")
			b.Write(appendSize(num[:0], d.Size))
		}
	}
	return b.String()
}

// DefaultDocumentsIndexBudget bounds Stage 1's documents index in
// characters (limits.documentsIndexBudget 0): about 200 documents' lines.
const DefaultDocumentsIndexBudget = 16000

// DocumentsIndexWithin is DocumentsIndex within budget runes (0:
// DefaultDocumentsIndexBudget), for round round (the current one). Every
// document keeps its docItem line while the whole index fits; beyond it,
// the oldest document lists are shown as one docList line each (label
// and count, without the docItem lines under it) until it fits: first the lists actions produced, then the
// uploads of earlier rounds. The current round's uploads are never
// collapsed, and the order stays creation order, so the index only
// changes at its end while nothing is collapsed.
func DocumentsIndexWithin(msgs []workflow.Message, round, budget int) string {
	if budget <= 0 {
		budget = DefaultDocumentsIndexBudget
	}
	full := DocumentsIndex(msgs)
	used := utf8.RuneCountInString(full)
	if used <= budget {
		return full
	}
	type block struct {
		m     *workflow.Message
		text  string
		short bool
	}
	var blocks []block
	for i := range msgs {
		if m := &msgs[i]; len(m.Documents) > 0 {
			blocks = append(blocks, block{m: m, text: DocumentsIndex(msgs[i : i+1])})
		}
	}
	collapse := func(take func(m *workflow.Message) bool) {
		for k := range blocks {
			b := &blocks[k]
			if used <= budget {
				return
			}
			if b.short || !take(b.m) {
				continue
			}
			line := "docList:" + b.m.ID + ":" + b.m.DocumentsLabel + "  (" + workflow.Count(len(b.m.Documents), "document", "documents") + ")"
			used += utf8.RuneCountInString(line) - utf8.RuneCountInString(b.text)
			b.text, b.short = line, true
		}
	}
	collapse(func(m *workflow.Message) bool { return m.Role != workflow.RoleUser })
	collapse(func(m *workflow.Message) bool { return m.Role == workflow.RoleUser && m.Round < round })
	texts := make([]string, len(blocks))
	for k, b := range blocks {
		texts[k] = b.text
	}
	return strings.Join(texts, "\n")
}

// appendSize appends the byte count n rendered for a person to dst:
// "512 B", "1.5 KB", "2.0 MB" (powers of 1024).
func appendSize(dst []byte, n int64) []byte {
	const unit = 1024
	if n < unit {
		return append(strconv.AppendInt(dst, n, 10), " B"...)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	dst = strconv.AppendFloat(dst, float64(n)/float64(div), 'f', 1, 64)
	return append(dst, ' ', "KMGTP"[exp], 'B')
}
