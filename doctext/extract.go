// Package doctext extracts the text of a document: plain text, Markdown,
// CSV, JSON, HTML and PDF, decoded to UTF-8 from the charset the document
// declares. It is what document.extract and ai.process read, and what the
// admin economy report counts. Extraction is bounded: a hostile PDF, a
// ragged CSV or deeply nested JSON cannot make it run long or blow the text
// up past a fixed multiple of the input.
package doctext

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/twostep/twostep/workflow"
)

// Format names a document format; Text and Markdown are also the output
// formats Extract writes.
type Format string

// The formats Detect recognises.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
	HTML     Format = "html"
	PDF      Format = "pdf"
)

// supportedFormats is the sentence an unsupported document's error ends with.
const supportedFormats = "supported are plain text, Markdown, CSV, JSON, HTML and PDF"

// Detect names the format of d from its MIME type, then its file
// extension, then its first bytes; "" when the format is not supported.
func Detect(d workflow.DocumentContent) Format {
	mt, _, err := mime.ParseMediaType(d.MimeType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(d.MimeType))
	}
	switch {
	case mt == "text/markdown" || mt == "text/x-markdown":
		return Markdown
	case mt == "text/csv" || mt == "application/csv":
		return CSV
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		return JSON
	case mt == "text/html" || mt == "application/xhtml+xml":
		return HTML
	case mt == "application/pdf":
		return PDF
	case strings.HasPrefix(mt, "text/"):
		return Text
	case mt != "" && mt != "application/octet-stream":
		return ""
	}
	switch strings.ToLower(path.Ext(d.Name)) {
	case ".md", ".markdown":
		return Markdown
	case ".csv":
		return CSV
	case ".json":
		return JSON
	case ".html", ".htm":
		return HTML
	case ".pdf":
		return PDF
	case ".txt", ".log", ".text":
		return Text
	}
	if bytes.HasPrefix(d.Content, []byte("%PDF-")) {
		return PDF
	}
	if utf8.Valid(d.Content) && !bytes.ContainsRune(d.Content, 0) {
		return Text
	}
	return ""
}

// PlainText returns d's plain text as document.extract extracts it (the
// admin economy report counts it), or an error naming why it has none.
func PlainText(d workflow.DocumentContent) (string, error) { return Extract(d, Text) }

// Extract returns the text of d in the output format (Text or Markdown),
// or a KindInvalid error that names the document and says why it has none.
func Extract(d workflow.DocumentContent, out Format) (string, error) {
	format := Detect(d)
	var (
		text string
		err  error
	)
	switch format {
	case Text, Markdown:
		text = cleanText(toUTF8(d.Content, d.MimeType))
	case CSV:
		text, err = csvText(cleanText(toUTF8(d.Content, d.MimeType)), out)
	case JSON:
		text, err = jsonText(toUTF8(d.Content, d.MimeType), out)
	case HTML:
		text, err = htmlText(toUTF8(d.Content, d.MimeType), out)
	case PDF:
		text, err = pdfText(d.Content)
	default:
		return "", workflow.Errorf(workflow.KindInvalid, "%s: unsupported type %s: %s",
			d.Name, quote(orUnknown(d.MimeType)), supportedFormats)
	}
	if err != nil {
		return "", workflow.WrapKind(workflow.KindInvalid, err, "%s: cannot read it as %s", d.Name, format)
	}
	return text, nil
}

// toUTF8 converts text to UTF-8 from the encoding its byte-order mark, its
// MIME type's charset or (for HTML) its <meta> element declares; undeclared
// text that is not valid UTF-8 is read as windows-1252, as browsers do.
func toUTF8(b []byte, mimeType string) []byte {
	enc, name, _ := charset.DetermineEncoding(b, mimeType)
	if name == "utf-8" {
		return b
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return b
	}
	return out
}

// cleanText turns bytes into valid UTF-8 without a byte-order mark and with
// "\n" line ends.
func cleanText(b []byte) string {
	s := strings.TrimPrefix(string(b), "\uFEFF")
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// csvText checks the CSV and returns it as is (text) or as a Markdown table.
// The delimiter is ';' when the first line has more of them than commas.
func csvText(s string, out Format) (string, error) {
	r := csv.NewReader(strings.NewReader(s))
	first, _, _ := strings.Cut(s, "\n")
	if strings.Count(first, ";") > strings.Count(first, ",") {
		r.Comma = ';'
	}
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	if err != nil {
		return "", err
	}
	if out != Markdown || len(rows) == 0 {
		return s, nil
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	// Every row is padded to the widest: "| x |" costs 4 bytes a cell.
	if len(s)+4*width*(len(rows)+1) > expansionBudget(len(s)) {
		return s, nil
	}
	var b strings.Builder
	for i, row := range rows {
		b.WriteString("|")
		for c := 0; c < width; c++ {
			cell := ""
			if c < len(row) {
				cell = strings.NewReplacer("|", `\|`, "\n", " ").Replace(row[c])
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
		}
	}
	return b.String(), nil
}

// jsonText checks the JSON and returns it indented (text) or in a fenced
// json block (Markdown).
func jsonText(b []byte, out Format) (string, error) {
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\uFEFF")))
	var buf bytes.Buffer
	if indentedSize(b) > expansionBudget(len(b)) {
		// Too deep or too long to indent: kept as sent once it parses.
		if err := json.Compact(&buf, b); err != nil {
			return "", fmt.Errorf("not valid JSON: %w", err)
		}
		buf.Reset()
		buf.Write(b)
	} else if err := json.Indent(&buf, b, "", "  "); err != nil {
		return "", fmt.Errorf("not valid JSON: %w", err)
	}
	if out == Markdown {
		return "```json\n" + buf.String() + "\n```\n", nil
	}
	return buf.String() + "\n", nil
}

// expansionBudget is the most text extraction lays n bytes out into
// (4n + 1 MiB): room for any table or indentation of ordinary data, and a
// bound on what ragged or deeply nested input could otherwise blow up to
// (kilobytes of either become gigabytes). Over it, the text is kept as sent.
func expansionBudget(n int) int { return 4*n + 1<<20 }

// indentedSize is about how many bytes json.Indent with a two-space indent
// makes of b: b plus a line break and the depth's indent before every
// element and closing bracket. It is linear in len(b).
func indentedSize(b []byte) int {
	size, depth, inString, escaped := len(b), 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			size += 1 + 2*depth
		case c == ',':
			size += 1 + 2*depth
		case c == ']' || c == '}':
			depth--
			size += 1 + 2*max(depth, 0)
		}
	}
	return size
}

// quote quotes s for a message.
func quote(s string) string {
	return "\"" + strings.ReplaceAll(s, "\"", "'") + "\""
}

// orUnknown returns s, or "unknown" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
