package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// The Idempotency-Key contract (DESIGN §10.3, docs/operators.md).
const (
	idempotencyHeader = "Idempotency-Key"
	replayedHeader    = "Idempotent-Replayed"
	// maxIdempotencyKey bounds a key's length (printable ASCII).
	maxIdempotencyKey = 255
	// idemClaimTTL is how long a claim of a request in progress lasts
	// without renewal; it is renewed every idemRenewEvery, so the key of
	// a request whose instance died is free again within idemClaimTTL.
	idemClaimTTL   = 30 * time.Second
	idemRenewEvery = 10 * time.Second
	// idemWait is how long a duplicate waits for the request in progress
	// before it is answered 409; idemPoll how often it looks.
	idemWait = 10 * time.Second
	idemPoll = 50 * time.Millisecond
	// idemMaxAnswer bounds the answer kept for replay; a larger one is
	// not kept (the claim is released).
	idemMaxAnswer = 4 << 20
	// idemStoreTimeout bounds the store calls made after the handler.
	idemStoreTimeout = 5 * time.Second
	// idemRefusedWindow is how long a refused (4xx) answer is kept: long
	// enough for a client's retries, not the day a success is kept.
	idemRefusedWindow = 10 * time.Minute
)

// idemSecretMembers are the members of an answer's JSON object that are
// never kept for replay: a secret is answered once, by the request that
// made it.
var idemSecretMembers = []string{"webhookSecret"}

// idempotentRoutes are the routes (gin's FullPath) that honour an
// Idempotency-Key on POST.
var idempotentRoutes = map[string]bool{
	"/api/v1/workflows":                           true,
	"/api/v1/workflows/:id/rounds":                true,
	"/api/v1/workflows/:id/approvals/:approvalId": true,
	"/api/v1/workflows/:id/stop":                  true,
	"/api/v1/workflows/:id/resume":                true,
	"/api/v1/workflows/:id/fork":                  true,
}

// replayedHeaders are the headers of an answer kept for replay; the
// others (the request id, dates) belong to each request.
var replayedHeaders = []string{"Content-Type", "Location", "Content-Location", "Preference-Applied", "Retry-After", "Cache-Control"}

// idempotency honours the Idempotency-Key header on the routes of
// idempotentRoutes: the first request with a (user, key) claims it in the
// store and runs; its answer is kept for limits.idempotencyWindow and
// replayed, with Idempotent-Replayed: true, to every later request with the
// same key and the same method, route, query and body (another request
// with the key → 422). A refused (4xx) answer is kept idemRefusedWindow; a
// user's kept answers stay within limits.idempotencyBytesPerUser (the ones
// that expire first are dropped); a kept answer holds no secret
// (idemSecretMembers are left out of it). A duplicate arriving while the first runs waits for
// its answer (409 after idemWait). Answers the same request might get
// differently on a retry — 5xx, 408, 409, 429 — are not kept: the claim is
// released. Requests without the header, and every other route, pass
// through untouched.
func (s *Server) idempotency() gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader(idempotencyHeader)
		if key == "" || s.idem == nil || c.Request.Method != http.MethodPost || !idempotentRoutes[c.FullPath()] {
			c.Next()
			return
		}
		if len(key) > maxIdempotencyKey || !printableASCII(key) {
			writeProblem(c, http.StatusBadRequest, "the Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces")
			return
		}
		r := &idemRequest{s: s, c: c, user: UserFrom(c.Request.Context()), key: key, token: workflow.NewID("idem_"), h: sha256.New()}
		_, _ = io.WriteString(r.h, c.Request.Method+" "+c.Request.URL.Path+"?"+c.Request.URL.RawQuery+"\n")
		if !r.claim() {
			return
		}
		r.run()
	}
}

// idemRequest is one request carrying an Idempotency-Key.
type idemRequest struct {
	s                *Server
	c                *gin.Context
	user, key, token string
	// h digests the method, route, query and body.
	h hash.Hash
}

// claim takes the key for this request and reports true, or answers the
// request (a replay, 422, 409, 503) and reports false.
func (r *idemRequest) claim() bool {
	ctx := r.c.Request.Context()
	deadline := time.Now().Add(idemWait)
	sum := ""
	for {
		rec, claimed, err := r.s.idem.ClaimIdempotency(ctx, r.user, r.key, r.token, idemClaimTTL)
		switch {
		case err != nil:
			r.unavailable(err)
			return false
		case claimed && sum != "":
			// The request this one waited for left no answer (it failed),
			// and this one's body went into its digest: the client retries.
			r.release()
			r.c.Header("Retry-After", "1")
			writeProblem(r.c, http.StatusConflict, "the earlier request with this Idempotency-Key failed without an answer to replay; retry this one")
			return false
		case claimed:
			return true
		}
		if sum == "" {
			var ok bool
			if sum, ok = r.digestBody(); !ok {
				return false
			}
		}
		if rec.Answer != nil {
			r.replay(rec.Answer, sum)
			return false
		}
		if time.Now().After(deadline) {
			r.c.Header("Retry-After", "1")
			writeProblem(r.c, http.StatusConflict, "a request with this Idempotency-Key is still in progress; retry it later to get its answer")
			return false
		}
		t := time.NewTimer(idemPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			r.c.Abort()
			return false
		case <-t.C:
		}
	}
}

// digestBody reads the rest of the body into the digest and returns it;
// false once it has answered a body too large or unreadable.
func (r *idemRequest) digestBody() (string, bool) {
	if r.c.Request.Body != nil {
		n, err := io.Copy(r.h, io.LimitReader(r.c.Request.Body, r.s.limits.MaxBodyBytes+1))
		switch {
		case n > r.s.limits.MaxBodyBytes:
			writeProblem(r.c, http.StatusRequestEntityTooLarge, "request body is too large limit="+strconv.FormatInt(r.s.limits.MaxBodyBytes, 10)+" bytes")
			return "", false
		case err != nil:
			writeProblem(r.c, http.StatusBadRequest, "the request body could not be read")
			return "", false
		}
	}
	return hex.EncodeToString(r.h.Sum(nil)), true
}

// replay answers with the kept answer when it belongs to the same request
// (digest sum), else 422.
func (r *idemRequest) replay(a *workflow.IdempotentAnswer, sum string) {
	if a.Hash != sum {
		writeProblem(r.c, http.StatusUnprocessableEntity, "this Idempotency-Key was already used with another request (method, route or body); use a new key for a new request")
		return
	}
	for k, vs := range a.Header {
		for _, v := range vs {
			r.c.Writer.Header().Add(k, v)
		}
	}
	r.c.Header(replayedHeader, "true")
	r.c.AbortWithStatus(a.Status)
	_, _ = r.c.Writer.Write(a.Body)
}

// run serves the request that holds the claim, renewing it meanwhile, and
// then keeps its answer or releases the claim.
func (r *idemRequest) run() {
	c := r.c
	body := c.Request.Body
	var tee *teeBody
	if body != nil {
		tee = &teeBody{r: io.TeeReader(body, r.h), c: body}
		c.Request.Body = tee
	}
	w := &captureWriter{ResponseWriter: c.Writer}
	c.Writer = w
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.renew(stop) })
	kept := false
	defer func() { // also when the handler panics
		close(stop)
		wg.Wait()
		if !kept {
			r.release()
		}
	}()
	c.Next()
	if !keepable(w.Status()) || w.overflow {
		return
	}
	if tee != nil && !tee.eof {
		// The handler left part of the body unread: digest the rest. A
		// body it closed first cannot be digested, so the answer is not
		// kept.
		if tee.closed {
			return
		}
		if n, err := io.Copy(r.h, io.LimitReader(body, r.s.limits.MaxBodyBytes+1)); err != nil || n > r.s.limits.MaxBodyBytes {
			return
		}
	}
	a := workflow.IdempotentAnswer{Hash: hex.EncodeToString(r.h.Sum(nil)), Status: w.Status(), Body: withoutSecrets(w.buf), Header: map[string][]string{}}
	for _, k := range replayedHeaders {
		if vs := w.Header().Values(k); len(vs) > 0 {
			a.Header[k] = vs
		}
	}
	keep := workflow.IdempotencyKeep{Window: r.s.limits.IdempotencyWindow, UserBytes: r.s.limits.IdempotencyBytesPerUser}
	if a.Status >= 400 {
		keep.Window = min(keep.Window, idemRefusedWindow)
	}
	if a.Size() > keep.UserBytes {
		return // larger than all a user may keep: not kept
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), idemStoreTimeout)
	defer cancel()
	if err := r.s.idem.SaveIdempotency(ctx, r.user, r.key, r.token, a, keep); err != nil {
		zerolog.Ctx(c.Request.Context()).Warn().Err(err).Msg("keeping the answer of an idempotent request failed")
		return
	}
	kept = true
}

// renew keeps the claim until stop is closed.
func (r *idemRequest) renew(stop <-chan struct{}) {
	t := time.NewTicker(idemRenewEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), idemStoreTimeout)
			_, _, err := r.s.idem.ClaimIdempotency(ctx, r.user, r.key, r.token, idemClaimTTL)
			cancel()
			if err != nil {
				zerolog.Ctx(r.c.Request.Context()).Warn().Err(err).Msg("renewing an idempotency claim failed")
			}
		}
	}
}

// release drops the claim, so a retry does the work itself.
func (r *idemRequest) release() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.c.Request.Context()), idemStoreTimeout)
	defer cancel()
	if err := r.s.idem.ReleaseIdempotency(ctx, r.user, r.key, r.token); err != nil {
		zerolog.Ctx(r.c.Request.Context()).Warn().Err(err).Msg("releasing an idempotency claim failed; it expires by itself")
	}
}

// unavailable answers a store failure: 503, the request not run.
func (r *idemRequest) unavailable(err error) {
	if errors.Is(err, context.Canceled) {
		r.c.Abort()
		return
	}
	zerolog.Ctx(r.c.Request.Context()).Error().Err(err).Msg("claiming an idempotency key failed")
	r.c.Header("Retry-After", strconv.Itoa(int(r.s.limits.RetryAfter.Seconds())))
	writeProblem(r.c, http.StatusServiceUnavailable, "the store that keeps Idempotency-Key answers is unavailable; retry later")
}

// keepable reports whether an answer of this status is kept for replay:
// not one a retry of the same request might change (a server error, a
// timeout, a conflict of the moment, a rate limit).
func keepable(status int) bool {
	switch {
	case status >= 500, status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests:
		return false
	}
	return status >= 200
}

// teeBody is a request body whose reads also feed the digest; it notes
// when the body was read to its end, or closed.
type teeBody struct {
	r           io.Reader
	c           io.Closer
	eof, closed bool
}

// Read implements io.Reader.
func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close implements io.Closer.
func (b *teeBody) Close() error {
	b.closed = true
	return b.c.Close()
}

// captureWriter keeps a copy of the answer (up to idemMaxAnswer bytes).
type captureWriter struct {
	gin.ResponseWriter
	buf      []byte
	overflow bool
}

func (w *captureWriter) keep(n int, b []byte) {
	if w.overflow || len(w.buf)+n > idemMaxAnswer {
		w.overflow, w.buf = true, nil
		return
	}
	w.buf = append(w.buf, b[:n]...)
}

// Write implements http.ResponseWriter.
func (w *captureWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.keep(n, b)
	return n, err
}

// WriteString implements io.StringWriter.
func (w *captureWriter) WriteString(s string) (int, error) {
	n, err := w.ResponseWriter.WriteString(s)
	w.keep(n, []byte(s))
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// documentIdempotency declares the Idempotency-Key header on the
// operations that honour it, the Idempotent-Replayed header on their
// answers, and the 422, 409 and 503 problems it may answer.
func documentIdempotency(oapi *huma.OpenAPI) {
	for path, item := range oapi.Paths {
		op := item.Post
		if op == nil || !idempotentRoutes[ginPath(path)] {
			continue
		}
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: idempotencyHeader, In: "header",
			Description: "A key of your own (1 to 255 printable ASCII characters) that makes a retry safe: the first answer " +
				"is kept for limits.idempotencyWindow (default 24h) and replayed to every request with the same key, " +
				"method, route, query and body; the same key with another request answers 422, and one sent while " +
				"the first is still being answered waits for it (409 after 10 s). Server errors, 408, 409 and 429 are not kept; " +
				"other 4xx answers are kept 10 minutes; a user's kept answers are bounded (limits.idempotencyBytesPerUser, " +
				"the first to expire dropped past it); a replay never holds webhookSecret.",
			Schema: &huma.Schema{Type: "string", MinLength: new(1), MaxLength: new(maxIdempotencyKey), Pattern: "^[!-~]+$"},
		})
		for code, r := range op.Responses {
			if len(code) == 3 && code[0] == '2' {
				if r.Headers == nil {
					r.Headers = map[string]*huma.Param{}
				}
				r.Headers[replayedHeader] = &huma.Param{
					Description: "true when this is the kept answer of an earlier request with the same Idempotency-Key",
					Schema:      &huma.Schema{Type: "string", Enum: []any{"true"}},
				}
			}
		}
		addProblem(op, http.StatusUnprocessableEntity, "Invalid input, or an Idempotency-Key already used with another request")
		addProblem(op, http.StatusConflict, "The workflow's state does not allow this now, or a request with the same Idempotency-Key is still being answered")
		addProblem(op, http.StatusServiceUnavailable, "The store is unavailable; retry after Retry-After")
		addProblem(op, http.StatusBadRequest, "A malformed request or Idempotency-Key")
	}
}

// ginPath is an OpenAPI path in gin's spelling ({id} → :id).
func ginPath(p string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(p, "/") {
		if part == "" {
			continue
		}
		b.WriteByte('/')
		if strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}") {
			part = ":" + part[1:len(part)-1]
		}
		b.WriteString(part)
	}
	return b.String()
}
