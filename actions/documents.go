package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/doctext"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// excerptChars bounds the excerpt of a result that goes into ActionResult.Text.
const excerptChars = 400

// runExtract is document.extract: one text document per input document. Any
// input it cannot read fails the step with one line per such document, so
// the model can retry with the readable ones.
func (r *Registry) runExtract(_ context.Context, inv invocation) (workflow.ActionResult, error) {
	given, _ := inv.call.Parameters["format"].(string)
	out := doctext.Format(given)
	if out == "" {
		out = doctext.Text
	}
	ext, mimeType := ".txt", "text/plain; charset=utf-8"
	if out == doctext.Markdown {
		ext, mimeType = ".md", "text/markdown; charset=utf-8"
	}
	var (
		res      workflow.ActionResult
		problems []string
		lines    []string
		taken    = map[string]bool{}
	)
	for _, d := range inv.call.Documents {
		text, err := doctext.Extract(d, out)
		if err != nil {
			problems = append(problems, workflow.PublicMessage(err)+errDetail(err))
			continue
		}
		name := uniqueName(taken, strings.TrimSuffix(safeFileName(d.Name), path.Ext(d.Name))+ext)
		res.Documents = append(res.Documents, textDocument(name, mimeType, text))
		lines = append(lines, fmt.Sprintf("%s from %s (%d characters)", name, d.Name, utf8.RuneCountInString(text)))
	}
	if len(problems) > 0 {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
			"cannot extract text from %d of %s:\n%s", len(problems), workflow.Count(len(inv.call.Documents), "document", ""), strings.Join(problems, "\n"))
	}
	res.Text = fmt.Sprintf("Extracted %s: %s.", workflow.Count(len(lines), "document", ""), strings.Join(lines, "; "))
	if len(res.Documents) > 0 {
		res.Text += "\nExcerpt: " + textclip.Excerpt(string(res.Documents[0].Content), excerptChars)
	}
	return res, nil
}

// checkGenerate returns the problems schema validation cannot see: an
// unusable file name, an oversize content, a malformed MIME type, JSON
// content that does not parse.
func (r *Registry) checkGenerate(p map[string]any) []string {
	var lines []string
	name := safeFileName(p["fileName"].(string))
	if name == "" {
		lines = append(lines, "/fileName: not a usable file name; give a plain name such as report.md")
	}
	content := p["content"].(string)
	if int64(len(content)) > r.limits.MaxDocumentBytes {
		lines = append(lines, fmt.Sprintf("/content: %d bytes, more than the %d allowed for one document", len(content), r.limits.MaxDocumentBytes))
	}
	mimeType, _ := p["mimeType"].(string)
	if mimeType == "" {
		mimeType = mimeFromName(name)
	}
	if _, _, err := mime.ParseMediaType(mimeType); err != nil {
		lines = append(lines, "/mimeType: not a MIME type, such as text/markdown")
	} else if isJSONType(mimeType) && !json.Valid([]byte(content)) {
		lines = append(lines, "/content: not valid JSON, but the document is "+mimeType)
	}
	return lines
}

// runGenerate is document.generate: one document with the given name and
// content, checked by checkGenerate.
func (r *Registry) runGenerate(_ context.Context, inv invocation) (workflow.ActionResult, error) {
	p := inv.call.Parameters
	content := p["content"].(string)
	name := safeFileName(p["fileName"].(string))
	mimeType, _ := p["mimeType"].(string)
	if mimeType == "" {
		mimeType = mimeFromName(name)
	}
	doc := textDocument(name, mimeType, content)
	return workflow.ActionResult{
		Text:      fmt.Sprintf("Generated %s (%s, %d bytes).\nExcerpt: %s", name, mimeType, len(content), textclip.Excerpt(content, excerptChars)),
		Documents: []workflow.DocumentContent{doc},
	}, nil
}

// isJSONType reports whether a MIME type names JSON.
func isJSONType(mimeType string) bool {
	return doctext.Detect(workflow.DocumentContent{Document: workflow.Document{MimeType: mimeType}}) == doctext.JSON
}

// textDocument returns a document to be committed by the engine.
func textDocument(name, mimeType, content string) workflow.DocumentContent {
	return workflow.DocumentContent{
		Document: workflow.Document{Name: name, MimeType: mimeType, Size: int64(len(content))},
		Content:  []byte(content),
	}
}

// safeFileName reduces name to a plain file name: no directories, no
// control characters, at most 200 bytes. It returns "" when nothing usable
// is left.
func safeFileName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(strings.TrimSpace(name))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`<>:"|?*`, r) {
			return '_'
		}
		return r
	}, name)
	if name == "." || name == "/" || name == ".." || strings.Trim(name, "._ ") == "" {
		return ""
	}
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// uniqueName returns name, or name with a numeric suffix when taken already.
func uniqueName(taken map[string]bool, name string) string {
	if name == "" || strings.HasPrefix(name, ".") {
		name = "document" + name
	}
	candidate := name
	for i := 2; taken[candidate]; i++ {
		ext := path.Ext(name)
		candidate = fmt.Sprintf("%s_%d%s", strings.TrimSuffix(name, ext), i, ext)
	}
	taken[candidate] = true
	return candidate
}

// maxMimeTypeLen bounds a media type taken from another service's reply.
const maxMimeTypeLen = 255

// cleanMimeType returns given when it is a media type such as
// "text/plain; charset=utf-8" of at most maxMimeTypeLen bytes, else "".
// Services' media types reach the document index the model reads, so
// anything else (newlines forging index lines, pages of text) is dropped.
func cleanMimeType(given string) string {
	if given == "" || len(given) > maxMimeTypeLen || !strings.Contains(given, "/") {
		return ""
	}
	if _, _, err := mime.ParseMediaType(given); err != nil {
		return ""
	}
	if strings.ContainsFunc(given, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return given
}

// mimeFromName returns the MIME type of a file name's extension, text/plain
// when it has none the package knows.
func mimeFromName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		return "text/markdown; charset=utf-8"
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".json":
		return "application/json"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "text/plain; charset=utf-8"
}

// errDetail returns ": cause" for an error whose cause is safe to show (a
// parse error of the user's own document), "" otherwise.
func errDetail(err error) string {
	var we *workflow.Error
	if !errors.As(err, &we) || we.Err == nil {
		return ""
	}
	return ": " + we.Err.Error()
}
