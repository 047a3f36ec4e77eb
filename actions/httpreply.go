package actions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/outbound"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// ReplyTextBytes caps the message text a plain HTTP reply becomes (an
// OpenAPI operation's, or a declared HTTP action's not in the {text,
// documents} shape): a longer JSON or text body is clipped there and kept
// whole as a document.
const ReplyTextBytes = 4000

// plainReply turns a 2xx reply of action into its result (DESIGN §10.2):
// JSON becomes compact JSON text, text stays text — each clipped at
// ReplyTextBytes, with the whole body as a document when longer — and any
// other type becomes a document. An empty body says so.
func (r *Registry) plainReply(rp outbound.Reply, action string) (workflow.ActionResult, error) {
	mimeType := cleanMimeType(rp.Header.Get("Content-Type"))
	mt, _, _ := mime.ParseMediaType(mimeType)
	status := fmt.Sprintf("%d %s", rp.Status, rp.StatusText)
	body := rp.Body
	if len(bytes.TrimSpace(body)) == 0 {
		return workflow.ActionResult{Text: fmt.Sprintf("%s answered %s with no content.", action, status)}, nil
	}
	var text string
	isJSON := mt == "application/json" || strings.HasSuffix(mt, "+json") || (mt == "" && json.Valid(body))
	switch {
	case isJSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return workflow.ActionResult{}, workflow.Errorf(workflow.KindUnavailable,
				"%s answered %s with a body that is not JSON (%s) although its type is %s", action, status, jsonProblem(err), mimeType)
		}
		text = buf.String()
		if mimeType == "" {
			mimeType = "application/json"
		}
	case (strings.HasPrefix(mt, "text/") || mt == "") && utf8.Valid(body) && !bytes.ContainsRune(body, 0):
		text = string(body)
		if mimeType == "" {
			mimeType = "text/plain; charset=utf-8"
		}
	default:
		if mimeType == "" {
			mimeType = "application/octet-stream"
		}
		doc, err := r.replyDocument(action, mimeType, body)
		if err != nil {
			return workflow.ActionResult{}, err
		}
		return workflow.ActionResult{
			Text:      fmt.Sprintf("%s answered %s (%s, %d bytes), saved as %s.", action, status, mimeType, len(body), doc.Name),
			Documents: []workflow.DocumentContent{doc},
		}, nil
	}
	if len(text) <= ReplyTextBytes {
		return workflow.ActionResult{Text: text}, nil
	}
	doc, err := r.replyDocument(action, mimeType, body)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	return workflow.ActionResult{
		Text:      textclip.Clip(text, ReplyTextBytes) + fmt.Sprintf("\n(%d bytes in all: the whole reply is the document %s)", len(body), doc.Name),
		Documents: []workflow.DocumentContent{doc},
	}, nil
}

// replyDocument keeps a reply body as a document named after the action
// ("crm_getTicket.json"), within the document size cap.
func (r *Registry) replyDocument(action, mimeType string, body []byte) (workflow.DocumentContent, error) {
	if int64(len(body)) > r.limits.MaxDocumentBytes {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindInvalid,
			"the reply of %s is %d bytes, more than the %d-byte document limit: ask for less (filters, paging)", action, len(body), r.limits.MaxDocumentBytes)
	}
	name := strings.Trim(unsafeNameChars.ReplaceAllString(action, "_"), "_") + extensionFor(mimeType)
	return workflow.DocumentContent{
		Document: workflow.Document{Name: name, MimeType: mimeType, Size: int64(len(body))},
		Content:  body,
	}, nil
}

// httpFailure is the failed step of a non-2xx reply: "HTTP <status> from
// <action>: <problem title/detail, or an excerpt>". 4xx replies are the
// call's fault (KindInvalid: the next Stage 1 may correct it), others the
// service's (KindUnavailable). Secrets are scrubbed by Execute.
func httpFailure(rp outbound.Reply, action string) error {
	kind := workflow.KindUnavailable
	if rp.Status >= 400 && rp.Status < 500 {
		kind = workflow.KindInvalid
	}
	msg := fmt.Sprintf("HTTP %d from %s", rp.Status, action)
	if detail := problemDetail(rp.Body); detail != "" {
		msg += ": " + detail
	} else if rp.StatusText != "" {
		msg += ": " + rp.StatusText
	}
	return workflow.Errorf(kind, "%s", msg)
}

// problemDetail explains a failed reply: an RFC 9457 problem's "title:
// detail", else its error, message, detail or title field, else an excerpt.
func problemDetail(b []byte) string {
	var fields map[string]any
	if json.Unmarshal(b, &fields) == nil {
		title, _ := fields["title"].(string)
		detail, _ := fields["detail"].(string)
		if title != "" && detail != "" {
			return textclip.Excerpt(title+": "+detail, 300)
		}
	}
	return replyDetail(b)
}
