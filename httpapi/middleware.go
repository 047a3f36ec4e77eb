package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/twostep/twostep/workflow"
)

// requestIDHeader carries the request id back to the caller (and is
// accepted from a trusted proxy when well formed).
const requestIDHeader = "X-Request-Id"

// observeRequests gives each request a logger (with its request id) in its
// context, logs one line when the request ends and counts it by route and
// status. It never logs headers, so tokens stay out of the log.
func (s *Server) observeRequests() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		reqID := c.GetHeader(requestIDHeader)
		if len(reqID) == 0 || len(reqID) > 64 || !printableASCII(reqID) {
			reqID = workflow.NewID("req_")
		}
		c.Header(requestIDHeader, reqID)
		c.Writer = &deadlineWriter{ResponseWriter: c.Writer, wait: s.writeWait}
		lc := s.log.With().Str("requestId", reqID)
		if sc := trace.SpanContextFromContext(c.Request.Context()); sc.IsValid() {
			// The server span of Options.Tracing: logs and traces join.
			lc = lc.Str("traceId", sc.TraceID().String()).Str("spanId", sc.SpanID().String())
		}
		l := lc.Logger()
		c.Request = c.Request.WithContext(l.WithContext(c.Request.Context()))

		c.Next()

		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		status := c.Writer.Status()
		if s.metrics != nil {
			s.metrics.RequestServed(methodLabel(c.Request.Method), route, strconv.Itoa(status))
		}
		lvl := zerolog.InfoLevel
		if status >= 500 {
			lvl = zerolog.ErrorLevel
		}
		zerolog.Ctx(c.Request.Context()).WithLevel(lvl).
			Str("method", c.Request.Method).Str("route", route).Int("status", status).
			Int("bytes", c.Writer.Size()).Dur("duration", time.Since(start)).Msg("request")
	}
}

// rejectMalformedQuery answers 422 for a query string that does not decode,
// as for any other invalid query parameter: url.Values silently drops such
// a pair, so "?limit=%ZZ" would run with the default and "?bogus=%ZZ"
// would pass the unknown-parameter check. Every operation of the OpenAPI
// document declares 422 (completeOpenAPI).
func rejectMalformedQuery() gin.HandlerFunc {
	return func(c *gin.Context) {
		if _, err := url.ParseQuery(c.Request.URL.RawQuery); err != nil {
			writeProblem(c, http.StatusUnprocessableEntity, "the query string is malformed (invalid percent-encoding?): "+err.Error())
			return
		}
		c.Next()
	}
}

// methodLabel is the method as a metric label: a standard method, or
// "other" for any token a client invents, so unauthenticated requests
// cannot add time series without bound.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// recoverPanics turns a panic in any handler into a 500 problem and an
// error log line with the panic value; the process keeps serving.
func (s *Server) recoverPanics() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				zerolog.Ctx(c.Request.Context()).Error().Str("panic", fmt.Sprint(v)).
					Str("path", c.Request.URL.Path).Msg("handler panicked")
				if !c.Writer.Written() {
					writeProblem(c, http.StatusInternalServerError, "internal error; the gateway log has the details")
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// loggerFrom returns the request's logger, or nil when none was attached.
func loggerFrom(ctx context.Context) *zerolog.Logger {
	l := zerolog.Ctx(ctx)
	if l.GetLevel() == zerolog.Disabled {
		return nil
	}
	return l
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
