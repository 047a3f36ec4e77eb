package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
)

// Request bodies are admitted by the bytes that actually arrive, not by the
// length a client declares: a body reserves each chunk against the
// in-flight budget as it is read and gives everything back when its
// request is answered. A client that declares 32 MiB and trickles a byte
// therefore holds a byte, not 32 MiB, and a body that arrives slower than
// Limits.MinUploadBytesPerSecond (after Limits.UploadRateGrace) is dropped
// with 408. One user's bodies together may hold at most
// Limits.MaxInflightUploadBytesPerUser and one connection's at most
// Limits.MaxBodyBytes, so no user, however many connections it opens, can
// take the whole budget from the others.

// errInflightRefused ends the read of a body that does not fit its share
// of the in-flight budget; the request is answered 503 with Retry-After.
var errInflightRefused = errors.New("request bodies in flight exceed the gateway's budget")

// errBodyTooSlow ends the read of a body that arrives slower than the
// minimum rate. It is a timeout (net.Error), so every route answers 408.
type errBodyTooSlow struct{}

func (errBodyTooSlow) Error() string   { return "request body arrives too slowly" }
func (errBodyTooSlow) Timeout() bool   { return true }
func (errBodyTooSlow) Temporary() bool { return true }

// inflightGate counts the body bytes held in flight, in total, by user and
// by connection. It is safe for concurrent use.
type inflightGate struct {
	limit, perUser, perConn int64

	mu    sync.Mutex
	total int64
	users map[string]int64
	conns map[string]int64
}

func newInflightGate(l Limits) *inflightGate {
	return &inflightGate{
		limit: l.MaxInflightUploadBytes, perUser: l.MaxInflightUploadBytesPerUser, perConn: l.MaxBodyBytes,
		users: map[string]int64{}, conns: map[string]int64{},
	}
}

// take reserves n more bytes for user on conn, or reports false (and
// reserves nothing) when the total, the user's share or the connection's
// would be exceeded.
func (g *inflightGate) take(user, conn string, n int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.total+n > g.limit || g.users[user]+n > g.perUser || g.conns[conn]+n > g.perConn {
		return false
	}
	g.total += n
	g.users[user] += n
	g.conns[conn] += n
	return true
}

// give returns n bytes taken by user on conn.
func (g *inflightGate) give(user, conn string, n int64) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total -= n
	if g.users[user] -= n; g.users[user] <= 0 {
		delete(g.users, user)
	}
	if g.conns[conn] -= n; g.conns[conn] <= 0 {
		delete(g.conns, conn)
	}
}

// held is the bytes in flight in total and for user.
func (g *inflightGate) held(user string) (total, ofUser int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total, g.users[user]
}

// meteredBody is a request body that reserves what it reads from the gate
// and refuses to go on below the minimum rate. Its owner calls release
// when the request is answered.
type meteredBody struct {
	io.ReadCloser
	gate       *inflightGate
	user, conn string
	held       int64
	rc         *http.ResponseController
	start      time.Time
	minRate    int64
	grace      time.Duration
	hard       time.Duration
}

// deadline is when the next byte must have arrived: the body must keep to
// minRate bytes a second after the grace period, and end within hard.
func (m *meteredBody) deadline() time.Time {
	d := m.start.Add(m.grace + time.Duration(float64(m.held)/float64(m.minRate)*float64(time.Second)))
	return minTime(d, m.start.Add(m.hard))
}

// Read implements io.Reader.
func (m *meteredBody) Read(p []byte) (int, error) {
	deadline := m.deadline()
	if !time.Now().Before(deadline) {
		return 0, errBodyTooSlow{}
	}
	// Where the connection takes no deadline (a test recorder), the rate
	// is still checked whenever a read returns.
	_ = m.rc.SetReadDeadline(deadline)
	n, err := m.ReadCloser.Read(p)
	if err != nil {
		// The body is over (or failed): lift the deadline. Left in place,
		// it would cut net/http's background read of the connection while
		// the handler runs, and that cancels the request's context.
		_ = m.rc.SetReadDeadline(time.Time{})
	}
	if n > 0 {
		if !m.gate.take(m.user, m.conn, int64(n)) {
			return 0, errInflightRefused
		}
		m.held += int64(n)
	}
	return n, err // a deadline passed: a timeout, answered 408
}

// release gives back every byte the body reserved.
func (m *meteredBody) release() {
	m.gate.give(m.user, m.conn, m.held)
	m.held = 0
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// maxBufferedBody is what capInflight reads ahead for the routes huma
// reads itself (none takes more than 1 MiB).
const maxBufferedBody = 1 << 20

// capInflight meters every request body (see meteredBody). The upload
// routes read it as a stream and answer a refusal themselves; for every
// other route the body (at most maxBufferedBody) is read here first, so a
// refusal is a clear 503 and a slow body a 408, not huma's 500.
func (s *Server) capInflight() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body == nil || c.Request.Body == http.NoBody || c.Request.ContentLength == 0 {
			c.Next()
			return
		}
		m := &meteredBody{
			ReadCloser: c.Request.Body, gate: s.inflight, user: UserFrom(c.Request.Context()), conn: c.Request.RemoteAddr,
			rc: http.NewResponseController(c.Writer), start: time.Now(),
			minRate: s.limits.MinUploadBytesPerSecond, grace: s.limits.UploadRateGrace, hard: time.Minute,
		}
		defer m.release()
		c.Request.Body = m
		if !isUploadRoute(c.Request.Method, c.FullPath()) {
			buf, err := io.ReadAll(io.LimitReader(m, maxBufferedBody+1))
			switch {
			case errors.Is(err, errInflightRefused):
				s.refuseInflight(c)
				return
			case isTimeout(err):
				writeProblem(c, http.StatusRequestTimeout, "request body read timeout: it arrived slower than "+
					strconv.FormatInt(s.limits.MinUploadBytesPerSecond, 10)+" bytes a second")
				return
			case err != nil:
				writeProblem(c, http.StatusBadRequest, "cannot read request body: "+err.Error())
				return
			}
			c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), m))
		}
		c.Next()
	}
}

// isUploadRoute reports the routes whose body streamUploads reads.
func isUploadRoute(method, route string) bool {
	return method == http.MethodPost && (route == "/api/v1/workflows" || route == "/api/v1/workflows/:id/rounds")
}

const inflightRefusal = "the gateway is receiving too many uploads at once (or too many of yours); retry after the Retry-After delay"

func (s *Server) refuseInflight(c *gin.Context) {
	c.Header("Retry-After", strconv.Itoa(max(1, int(s.limits.RetryAfter.Seconds()))))
	writeProblem(c, http.StatusServiceUnavailable, inflightRefusal)
}

// writeInflightRefused is refuseInflight inside a huma operation.
func writeInflightRefused(api huma.API, ctx huma.Context, retryAfter time.Duration) {
	ctx.SetHeader("Retry-After", strconv.Itoa(max(1, int(retryAfter.Seconds()))))
	_ = huma.WriteErr(api, ctx, http.StatusServiceUnavailable, inflightRefusal)
}
