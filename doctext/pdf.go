package doctext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on reading one PDF. The library trusts the file: it counts pages
// from /Count, follows /Kids and /Parent without noticing loops and
// inflates streams without limit, so pdfText walks the page tree itself.
const (
	// maxPDFDepth bounds the page tree's nesting and a page's /Parent chain.
	maxPDFDepth = 32
	// maxPDFNodes bounds the page tree nodes visited; a loop in /Kids
	// reaches it.
	maxPDFNodes = 20000
	// maxPDFStreamBytes bounds the inflated content and ToUnicode streams
	// of all pages together (a few KB of Flate inflate to gigabytes).
	maxPDFStreamBytes = 64 << 20
)

// pdfText returns the text of a PDF, page by page with a blank line between
// pages (pages without text are skipped). The PDF library panics on some
// malformed files; a panic becomes an error here. Time and memory are
// bounded by the limits above, whatever the file claims.
func pdfText(b []byte) (string, error) { return pdfTextWithin(b, maxPDFStreamBytes) }

// pdfTextWithin is pdfText with streams bounded to streamBudget bytes.
func pdfTextWithin(b []byte, streamBudget int64) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("malformed PDF: %v", p)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", fmt.Errorf("not a readable PDF: %w", err)
	}
	w := &pdfWalker{budget: streamBudget, streamBudget: streamBudget}
	if err := w.walk(r.Trailer().Key("Root").Key("Pages"), 0); err != nil {
		return "", err
	}
	if w.out.Len() > 0 {
		w.out.WriteString("\n")
	}
	text = w.out.String()
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the PDF has no extractable text (a scanned image needs OCR, which is not supported)")
	}
	return text, nil
}

// pdfWalker visits a page tree in order, within the bounds.
type pdfWalker struct {
	out          strings.Builder
	nodes, pages int
	budget       int64 // the whole stream budget, for messages
	streamBudget int64 // what is left of it
}

func (w *pdfWalker) walk(node pdf.Value, depth int) error {
	if w.nodes++; w.nodes > maxPDFNodes {
		return fmt.Errorf("the page tree has more than %d nodes (or loops)", maxPDFNodes)
	}
	if depth > maxPDFDepth {
		return fmt.Errorf("the page tree is nested deeper than %d levels (or loops)", maxPDFDepth)
	}
	switch node.Key("Type").Name() {
	case "Pages":
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if err := w.walk(kids.Index(i), depth+1); err != nil {
				return err
			}
		}
	case "Page":
		w.pages++
		return w.page(node)
	}
	return nil
}

// page appends one page's text once its streams fit the budget.
func (w *pdfWalker) page(v pdf.Value) error {
	res, err := inherited(v, "Resources")
	if err != nil {
		return fmt.Errorf("page %d: %w", w.pages, err)
	}
	streams := []pdf.Value{v.Key("Contents")}
	fonts := res.Key("Font")
	for _, name := range fonts.Keys() {
		streams = append(streams, fonts.Key(name).Key("ToUnicode"))
	}
	for _, s := range streams {
		if err := w.spend(s); err != nil {
			return fmt.Errorf("page %d: %w", w.pages, err)
		}
	}
	text, err := pdf.Page{V: v}.GetPlainText(nil)
	if err != nil {
		return fmt.Errorf("page %d: %w", w.pages, err)
	}
	if text = strings.TrimSpace(text); text == "" {
		return nil
	}
	if w.out.Len() > 0 {
		w.out.WriteString("\n\n")
	}
	w.out.WriteString(text)
	return nil
}

// spend inflates s (a stream, or an array of streams) into nowhere and
// charges its size to the budget.
func (w *pdfWalker) spend(s pdf.Value) error {
	if s.Kind() == pdf.Array {
		for i := 0; i < s.Len() && i < maxPDFNodes; i++ {
			if err := w.spend(s.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	if s.Kind() != pdf.Stream {
		return nil
	}
	rc := s.Reader()
	defer rc.Close()
	n, _ := io.Copy(io.Discard, io.LimitReader(rc, w.streamBudget+1))
	if w.streamBudget -= n; w.streamBudget < 0 {
		return fmt.Errorf("its streams inflate to more than %d bytes", w.budget)
	}
	return nil
}

// inherited returns key from v or the nearest /Parent that has it, and
// fails when the chain is longer than maxPDFDepth (a /Parent loop).
func inherited(v pdf.Value, key string) (pdf.Value, error) {
	for i := 0; !v.IsNull(); i++ {
		if i > maxPDFDepth {
			return pdf.Value{}, fmt.Errorf("its /Parent chain is longer than %d (or loops)", maxPDFDepth)
		}
		if r := v.Key(key); !r.IsNull() {
			return r, nil
		}
		v = v.Key("Parent")
	}
	return pdf.Value{}, nil
}
