package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// statusByKind is the one table mapping workflow error kinds to HTTP status
// codes. A kind not listed (and any error that is not a *workflow.Error) is
// internal: 500 with a generic message, the detail logged.
var statusByKind = map[workflow.Kind]int{
	workflow.KindNotFound:     http.StatusNotFound,
	workflow.KindInvalid:      http.StatusUnprocessableEntity,
	workflow.KindConflict:     http.StatusConflict,
	workflow.KindUnauthorized: http.StatusUnauthorized,
	workflow.KindForbidden:    http.StatusForbidden,
	workflow.KindTooMany:      http.StatusTooManyRequests,
	workflow.KindUnavailable:  http.StatusServiceUnavailable,
	workflow.KindInternal:     http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for err's kind.
func StatusOf(err error) int {
	if st, ok := statusByKind[workflow.KindOf(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// fail turns an error from the engine or the store into the huma error the
// caller sees: the status from statusByKind, the caller-safe message, and
// Retry-After on 429/503. Internal errors are logged with their detail under
// the operation's name and answered with a generic message.
func (s *Server) fail(ctx context.Context, op string, err error) error {
	status := StatusOf(err)
	msg := workflow.PublicMessage(err)
	if status >= 500 {
		zerolog.Ctx(ctx).Error().Err(err).Str("op", op).Msg("request failed")
		if status == http.StatusInternalServerError {
			msg = "internal error; the gateway log has the details"
		}
	} else {
		zerolog.Ctx(ctx).Debug().Err(err).Str("op", op).Int("status", status).Msg("request refused")
	}
	herr := huma.NewError(status, msg)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		retry := int(s.limits.RetryAfter.Seconds())
		if be := (*workflow.BudgetError)(nil); errors.As(err, &be) {
			// A spent budget: until its period resets.
			retry = max(int(math.Ceil(time.Until(be.ResetsAt).Seconds())), 1)
		}
		return huma.ErrorWithHeaders(herr, http.Header{"Retry-After": {strconv.Itoa(retry)}})
	}
	return herr
}

// invalid returns a 422 problem naming the offending location, e.g.
// "body.documents[1].name".
func invalid(location, msg string, value any) error {
	return huma.Error422UnprocessableEntity("request is invalid: "+location+": "+msg,
		&huma.ErrorDetail{Location: location, Message: msg, Value: value})
}

// writeProblem writes an RFC 9457 problem from gin middleware, outside huma
// (auth, unknown routes, panics), and aborts the chain.
func writeProblem(c *gin.Context, status int, detail string) {
	body, _ := json.Marshal(huma.ErrorModel{
		Type:   problemType,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
	})
	c.Header("Content-Type", "application/problem+json")
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatus(status)
	_, _ = c.Writer.Write(body)
}

// tooLarge returns a 413 problem for a document over the size limit.
func tooLarge(location string, limit int64) error {
	return huma.Error413RequestEntityTooLarge(documentTooLarge(location, limit),
		&huma.ErrorDetail{Location: location, Message: "document too large"})
}

// maxEchoedValue bounds how much of a rejected value a problem echoes
// (boundProblem).
const maxEchoedValue = 200
