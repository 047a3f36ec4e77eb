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

// DocumentsBudget is the part of a WORKFLOW_HISTORY budget (0: the
// default) the documents index may take in Stage 1: a quarter of it.
func DocumentsBudget(budget int) int { return historyBudget(budget) / 4 }

// DocumentsIndexWithin is DocumentsIndex within budget runes: when the
// whole index does not fit, the document lists of the newest messages that
// fit are shown (still in creation order, the newest at least), after one
// line saying how many earlier lists are left out and how to refer to
// them (docList:<label>, which resolves to the latest list with the label
// the history names). A long workflow's
// index then grows no more than its history.
func DocumentsIndexWithin(msgs []workflow.Message, budget int) string {
	full := DocumentsIndex(msgs)
	if utf8.RuneCountInString(full) <= budget {
		return full
	}
	// One block per message: "docList:..." and its docItem lines (a file
	// name is on one line, so "\ndocList:" only starts a block).
	blocks := strings.Split(full, "\ndocList:")
	for i := 1; i < len(blocks); i++ {
		blocks[i] = "docList:" + blocks[i]
	}
	head := func(n int) string {
		return "(" + workflow.Count(n, "earlier document list", "earlier document lists") +
			" not shown; docList:<label> names the latest list with a label)\n"
	}
	keep := len(blocks) - 1
	used := utf8.RuneCountInString(head(keep)) + utf8.RuneCountInString(blocks[keep])
	for keep > 0 {
		r := utf8.RuneCountInString(blocks[keep-1]) + 1
		if used+r > budget {
			break
		}
		used += r
		keep--
	}
	return head(keep) + strings.Join(blocks[keep:], "\n")
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
