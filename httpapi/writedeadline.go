package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// deadlineWriter sets a write deadline of wait when the response starts
// (its first Write or Flush), so a client that stops reading cannot hold a
// handler and its buffers forever: http.Server has no WriteTimeout because
// event streams must outlive any fixed one, and a handler that computes for
// long (an admin replay waits for the model) must still be able to answer.
// Event streams extend the deadline frame by frame. Where the connection
// cannot take deadlines (a test recorder) nothing changes.
type deadlineWriter struct {
	gin.ResponseWriter
	wait    time.Duration
	started bool
}

func (w *deadlineWriter) start() {
	if w.started {
		return
	}
	w.started = true
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.wait))
}

// Write implements http.ResponseWriter.
func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// WriteString implements io.StringWriter.
func (w *deadlineWriter) WriteString(s string) (int, error) {
	w.start()
	return w.ResponseWriter.WriteString(s)
}

// Flush implements http.Flusher.
func (w *deadlineWriter) Flush() {
	w.start()
	w.ResponseWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
