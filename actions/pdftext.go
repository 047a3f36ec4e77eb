package actions

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfText returns the text of a PDF, page by page with a blank line between
// pages (pages without text are skipped). The PDF library panics on some malformed files; a
// panic becomes an error here.
func pdfText(b []byte) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("malformed PDF: %v", p)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", fmt.Errorf("not a readable PDF: %w", err)
	}
	var out strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		page := r.Page(i)
		if page.V.IsNull() {
			continue
		}
		text, err := page.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i, err)
		}
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		out.WriteString(text)
	}
	if out.Len() > 0 {
		out.WriteString("\n")
	}
	text = out.String()
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the PDF has no extractable text (a scanned image needs OCR, which is not supported)")
	}
	return text, nil
}
