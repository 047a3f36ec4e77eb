package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"

	"github.com/twostep/twostep/httpapi/upload"
)

// Uploads arrive as base64 strings inside a JSON body. Left to huma, one
// 24 MiB upload is held as the raw body, a parsed copy for validation, the
// decoded struct's string and the decoded bytes: 4–5 times its size. The
// upload routes therefore stream their body through upload.Transcode before
// huma sees it: huma gets the same JSON with the contents emptied, so
// validation, the OpenAPI document and every other answer stay exactly as
// they were, and the handlers take the decoded bytes from the stash in the
// context (stashFrom).

// uploadStashKey is the context key of a request's *upload.Stash.
type uploadStashKey struct{}

// stashFrom returns the stash streamUploads put in ctx, or nil.
func stashFrom(ctx context.Context) *upload.Stash {
	s, _ := ctx.Value(uploadStashKey{}).(*upload.Stash)
	return s
}

// streamUploads is the operation middleware of the routes whose body has
// documents: it enforces the operation's body limit and read timeout as
// huma would (413, 408), decodes the contents into an upload.Stash in the
// context and hands huma the body with the contents emptied. A body that
// cannot be valid (too many documents or JSON values) is a 422 before
// anything parses it.
func streamUploads(api huma.API, limits Limits, maxBody int64, readTimeout time.Duration) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		if ct := ctx.Header("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
			next(ctx) // huma answers 415 as before
			return
		}
		gc := humagin.Unwrap(ctx)
		body := gc.Request.Body
		if body == nil || body == http.NoBody {
			next(ctx)
			return
		}
		if gc.Request.ContentLength > maxBody {
			// Refused before reading a byte of it: the client sending
			// Expect: 100-continue never sends the body at all.
			_ = huma.WriteErr(api, ctx, http.StatusRequestEntityTooLarge, bodyTooLarge(limits, maxBody))
			return
		}
		_ = ctx.SetReadDeadline(time.Now().Add(readTimeout))
		length := gc.Request.ContentLength // -1 when unknown: refused after maxBody bytes
		res, err := upload.Transcode(io.LimitReader(body, maxBody), length,
			upload.Limits{MaxDocuments: limits.MaxDocuments, MaxDocumentBytes: limits.MaxDocumentBytes})
		body.Close()
		var shape *upload.ShapeError
		switch {
		case errors.As(err, &shape):
			_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "request is invalid: "+shape.Error(),
				&huma.ErrorDetail{Location: shape.Location, Message: shape.Msg})
			return
		case errors.Is(err, errInflightRefused):
			writeInflightRefused(api, ctx, limits.RetryAfter)
			return
		case res.Read >= maxBody:
			_ = huma.WriteErr(api, ctx, http.StatusRequestEntityTooLarge, bodyTooLarge(limits, maxBody))
			return
		case err != nil:
			var nErr net.Error
			if errors.As(err, &nErr) && nErr.Timeout() {
				_ = huma.WriteErr(api, ctx, http.StatusRequestTimeout, "request body read timeout")
				return
			}
			_ = huma.WriteErr(api, ctx, http.StatusBadRequest, "cannot read request body: "+err.Error())
			return
		}
		gc.Request.Body = io.NopCloser(bytes.NewReader(res.Body))
		gc.Request.ContentLength = int64(len(res.Body))
		next(huma.WithValue(ctx, uploadStashKey{}, res.Stash))
	}
}
