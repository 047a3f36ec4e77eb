package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/outbound"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// unsafeNameChars are replaced in file names derived from a request path.
var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// runHTTPRequest is http.request: one request under the connection's base
// URL, with the connection's headers, the Idempotency-Key header and X-Fencing-Token; a 2xx
// reply becomes one document.
func (r *Registry) runHTTPRequest(ctx context.Context, inv invocation) (workflow.ActionResult, error) {
	p := inv.call.Parameters
	method, _ := p["method"].(string)
	if method == "" {
		method = http.MethodGet
	}
	path := p["path"].(string)
	query, _ := p["query"].(map[string]any)
	target, err := outbound.PathUnder(inv.conn.base, path, query)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	body, contentType, err := requestBody(p["body"])
	if err != nil {
		return workflow.ActionResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), body)
	if err != nil {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInvalid, err, "cannot build the %s request", method)
	}
	req.Header.Set("User-Agent", "twostep")
	req.Header.Set("Accept", "application/json, text/*;q=0.9, */*;q=0.8")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for name, values := range inv.conn.headers {
		req.Header[name] = values
	}
	req.Header.Set("Idempotency-Key", inv.call.IdempotencyKey)
	setFencingToken(req.Header, inv.call.FencingToken)
	what := "connection " + quote(inv.conn.public.Label)
	rp, err := r.out().Send(ctx, req, inv.conn.base, inv.conn.timeout, what)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	shown := method + " " + target.EscapedPath()
	if !rp.OK() {
		return workflow.ActionResult{}, outbound.StatusError(rp, fmt.Sprintf("%s (%s)", what, shown), replyDetail(rp.Body))
	}
	mimeType := cleanMimeType(rp.Header.Get("Content-Type"))
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	name := responseName(method, target.Path[len(inv.conn.base.Path):], mimeType)
	text := fmt.Sprintf("%s answered %d %s (%s, %d bytes), saved as %s.", shown, rp.Status, rp.StatusText, mimeType, len(rp.Body), name)
	if ex := bodyExcerpt(rp.Body, excerptChars); ex != "" {
		text += "\nExcerpt: " + ex
	}
	doc := workflow.DocumentContent{
		Document: workflow.Document{Name: name, MimeType: mimeType, Size: int64(len(rp.Body))},
		Content:  rp.Body,
	}
	return workflow.ActionResult{Text: text, Documents: []workflow.DocumentContent{doc}}, nil
}

// checkHTTPRequest returns the problems schema validation cannot see: a
// path that would leave the base URL (checkPath), a body on a GET.
func checkHTTPRequest(p map[string]any) []string {
	var lines []string
	if _, refused := outbound.CheckPath(p["path"].(string)); refused != "" {
		lines = append(lines, "/path: refused: "+refused)
	}
	method, _ := p["method"].(string)
	if body, ok := p["body"]; ok && body != "" && (method == "" || method == http.MethodGet) {
		lines = append(lines, "/body: a GET request takes no body; use query parameters or another method")
	}
	return lines
}

// requestBody encodes the body parameter: an object as JSON, a string as is
// (JSON when it parses as JSON, plain text otherwise). checkHTTPRequest has
// refused a body on a GET.
func requestBody(body any) (io.Reader, string, error) {
	switch b := body.(type) {
	case nil:
		return nil, "", nil
	case string:
		if b == "" {
			return nil, "", nil
		}
		if json.Valid([]byte(b)) {
			return strings.NewReader(b), "application/json", nil
		}
		return strings.NewReader(b), "text/plain; charset=utf-8", nil
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, "", workflow.WrapKind(workflow.KindInvalid, err, "the body cannot be written as JSON")
		}
		return bytes.NewReader(raw), "application/json", nil
	}
}

// responseName derives a document name from the method, the path below the
// base URL and the reply's type: "get_customers_42.json".
func responseName(method, path, mimeType string) string {
	stem := strings.Trim(unsafeNameChars.ReplaceAllString(path, "_"), "_")
	if stem == "" {
		stem = "root"
	}
	stem = textclip.Cut(stem, 80) // ASCII: a plain cut
	return strings.ToLower(method) + "_" + stem + extensionFor(mimeType)
}

// extensionFor returns a file extension for a MIME type.
func extensionFor(mimeType string) string {
	mt, _, _ := mime.ParseMediaType(mimeType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return ".json"
	case mt == "text/html":
		return ".html"
	case mt == "text/csv":
		return ".csv"
	case mt == "text/markdown":
		return ".md"
	case mt == "application/pdf":
		return ".pdf"
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return ".xml"
	case strings.HasPrefix(mt, "text/"):
		return ".txt"
	}
	return ".bin"
}

// bodyExcerpt returns a one-line excerpt of a textual body, "" for binary.
func bodyExcerpt(b []byte, n int) string {
	if len(b) == 0 || !utf8.Valid(b) || bytes.ContainsRune(b, 0) {
		return ""
	}
	return textclip.Excerpt(string(b), n)
}
