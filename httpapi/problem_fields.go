package httpapi

import (
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// problemType is the RFC 9457 type of every problem the gateway sends:
// none beyond the HTTP status.
const problemType = "about:blank"

// problemFields is a huma transformer that fills the fields the OpenAPI
// document declares required on every problem (type, title, status,
// detail, and each error's message), so a generated client needs no pointer or undefined check for
// them. It also makes a 415 say which header to send, and never lets a
// problem echo the whole request body.
func problemFields(_ huma.Context, _ string, v any) (any, error) {
	em, ok := v.(*huma.ErrorModel)
	if !ok {
		return v, nil
	}
	if em.Status == http.StatusUnsupportedMediaType {
		// huma's "validation failed" with the body echoed back: say what
		// to send instead, and never return the body.
		ct := ""
		for _, d := range em.Errors {
			if d != nil {
				if rest, ok := strings.CutPrefix(d.Message, "unknown content type: "); ok {
					ct = rest
				}
				d.Value = nil
			}
		}
		em.Detail = unsupportedBody(ct)
	}
	if rest, ok := strings.CutPrefix(em.Detail, "request body is too large limit="); ok && em.Status == http.StatusRequestEntityTooLarge {
		// huma's own refusal on a route with a fixed limit (a decision).
		em.Detail = "the request body is larger than this route's limit of " + strings.TrimSuffix(rest, " bytes") +
			" bytes: send a smaller body"
	}
	if em.Type == "" {
		em.Type = problemType
	}
	if em.Title == "" {
		em.Title = http.StatusText(em.Status)
	}
	if em.Detail == "" {
		em.Detail = em.Title
	}
	for _, d := range em.Errors {
		if d != nil && d.Location == "body" {
			d.Value = nil // the whole body: never echoed
		}
		if d != nil && d.Message == "" {
			d.Message = em.Detail
		}
	}
	return em, nil
}
