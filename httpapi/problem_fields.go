package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// problemType is the RFC 9457 type of every problem the gateway sends:
// none beyond the HTTP status.
const problemType = "about:blank"

// problemFields is a huma transformer that fills the fields the OpenAPI
// document declares required on every problem (type, title, status,
// detail), so a generated client needs no pointer or undefined check for
// them.
func problemFields(_ huma.Context, _ string, v any) (any, error) {
	em, ok := v.(*huma.ErrorModel)
	if !ok {
		return v, nil
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
	return em, nil
}
