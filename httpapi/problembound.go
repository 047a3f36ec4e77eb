package httpapi

import (
	"encoding/json"
	"fmt"
	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/textclip"
)

// A problem answer is bounded whatever the request: a body of ten million
// wrong array elements would otherwise be answered with one error each.
// boundProblem keeps the first maxProblemErrors errors, adds one "… and N
// more" line for the rest, shortens long locations and messages, drops
// echoed values that are not scalars (huma echoes a whole array that has
// too many items), and finally drops errors until the encoded answer fits
// in maxProblemBytes.
const (
	maxProblemErrors   = 20
	maxProblemBytes    = 64 << 10
	maxProblemLocation = 200
	maxProblemMessage  = 500
	maxProblemDetail   = 2000
)

// boundProblem is a huma transformer applying the bounds above to every
// problem huma writes (the gin-level writeProblem writes only short
// messages of its own).
func boundProblem(_ huma.Context, _ string, v any) (any, error) {
	em, ok := v.(*huma.ErrorModel)
	if !ok {
		return v, nil
	}
	em.Detail = cut(em.Detail, maxProblemDetail)
	more := 0
	if len(em.Errors) > maxProblemErrors {
		more = len(em.Errors) - maxProblemErrors
		em.Errors = em.Errors[:maxProblemErrors:maxProblemErrors]
	}
	for _, d := range em.Errors {
		if d == nil {
			continue
		}
		d.Location = cut(d.Location, maxProblemLocation)
		d.Message = cut(d.Message, maxProblemMessage)
		switch val := d.Value.(type) {
		case nil, bool, float64, float32, int, int64, json.Number:
		case string:
			d.Value = cut(val, maxEchoedValue)
		default:
			d.Value = nil // an object or array: not echoed
		}
	}
	for {
		errs := em.Errors
		if more > 0 {
			errs = append(errs[:len(errs):len(errs)], &huma.ErrorDetail{Message: fmt.Sprintf("… and %d more", more)})
		}
		out := *em
		out.Errors = errs
		b, err := json.Marshal(&out)
		if err != nil || len(b) <= maxProblemBytes || len(em.Errors) == 0 {
			return &out, nil
		}
		em.Errors = em.Errors[:len(em.Errors)-1]
		more++
	}
}

// cut shortens s to at most n bytes without splitting a character
// (textclip.Cut, the one cut), saying it was truncated.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textclip.Cut(s, n) + "…(truncated)"
}
