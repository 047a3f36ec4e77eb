package actions

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// received is one request as a test server saw it.
type received struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   string
}

// recorder is an httptest server that records every request and answers
// with handle.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
}

// newRecorder starts a recording server, closed when the test ends.
func newRecorder(t testing.TB, handle http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.requests = append(rec.requests, received{
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body),
		})
		rec.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// got returns the recorded requests.
func (rec *recorder) got() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.requests...)
}

// answer returns a handler that answers status, content type and body.
func answer(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// hang answers only when the client gives up (or after the test's server
// closes), to exercise timeouts.
func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}
