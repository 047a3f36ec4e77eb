package httpapi

import "fmt"

// bodyTooLarge is the detail of a 413 for a request body over maxBody
// (limits.maxBodyBytes): it names the setting and why documents take more
// room than their size, and the per-document limit when a document as
// large as the body allows would be refused by it too.
func bodyTooLarge(l Limits, maxBody int64) string {
	msg := fmt.Sprintf("the request body is larger than %d bytes (limits.maxBodyBytes in GATEWAY_CONFIG). "+
		"Documents travel base64-encoded, so a document takes about 4/3 of its size in the body: "+
		"send fewer or smaller documents, or raise limits.maxBodyBytes", maxBody)
	if l.MaxDocumentBytes > 0 && maxBody/4*3 > l.MaxDocumentBytes {
		msg += fmt.Sprintf("; each document is also limited to %d decoded bytes (limits.maxUploadBytes)", l.MaxDocumentBytes)
	}
	return msg
}

// documentTooLarge is the detail of a 413 for one document over the
// per-document limit.
func documentTooLarge(location string, limit int64) string {
	return fmt.Sprintf("%s: document is larger than %d bytes, the per-document limit (limits.maxUploadBytes in GATEWAY_CONFIG; "+
		"counted on the decoded bytes, not the base64 text): send a smaller document or raise the limit", location, limit)
}

// unsupportedBody is the detail of a 415: what to send instead of ct.
func unsupportedBody(ct string) string {
	if ct == "" {
		return "the body must be JSON: send it with the header Content-Type: application/json"
	}
	return fmt.Sprintf("the body must be JSON: send it with the header Content-Type: application/json (this request sent %s)", ct)
}
