package placeholders

import (
	"fmt"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// DocumentsIndex returns the AVAILABLE_DOCUMENTS_INDEX value in exactly the
// format of DESIGN §4: every message that carries documents, newest first
// (messages are taken in reverse slice order, which is seq order from the
// store), as
//
//	docList:<messageId>:<documentsLabel>  (N documents)
//	  docItem:<documentId>:<fileName>  <mimeType>, <size>
//
// or "(no documents)". The references are the ones workflow.ParseReference
// accepts and workflow.ResolveDocuments resolves for this workflow.
func DocumentsIndex(msgs []workflow.Message) string {
	var b strings.Builder
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if len(m.Documents) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "docList:%s:%s  (%s)", m.ID, m.DocumentsLabel, workflow.Count(len(m.Documents), "document", ""))
		for _, d := range m.Documents {
			fmt.Fprintf(&b, "\n  docItem:%s:%s  %s, %s", d.ID, workflow.OneLine(d.Name), d.MimeType, FormatSize(d.Size))
		}
	}
	if b.Len() == 0 {
		return "(no documents)"
	}
	return b.String()
}

// FormatSize renders a byte count for a person: "512 B", "1.5 KB",
// "2.0 MB" (powers of 1024).
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTP"[exp])
}
