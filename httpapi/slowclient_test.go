package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestClientThatStopsReadingIsDropped: a client that sends a request and
// then never reads must not hold a handler (and the bytes it is writing)
// forever. Both a document download and an event stream end once a write
// has been blocked for WriteTimeout.
func TestClientThatStopsReadingIsDropped(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 64<<10)
	tests := []struct {
		name string
		path func(env *testEnv, w *workflow.Workflow) string
	}{
		{"document download", func(env *testEnv, w *workflow.Workflow) string {
			d := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument),
				WorkflowID: w.ID, Name: "big.bin", MimeType: "application/octet-stream"}, Content: []byte(strings.Repeat(big, 512))}
			env.store.docs[d.ID] = d
			return "/api/v1/workflows/" + w.ID + "/documents/" + d.ID
		}},
		{"event stream", func(env *testEnv, w *workflow.Workflow) string {
			msgs := make([]workflow.Message, 512)
			for i := range msgs {
				msgs[i] = workflow.Message{ID: fmt.Sprintf("m%d", i), Role: workflow.RoleAssistant, Text: big}
			}
			env.store.put(w, msgs...)
			return "/api/v1/workflows/" + w.ID + "/events"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, func(o *Options) { o.WriteTimeout = 200 * time.Millisecond })
			w := testWorkflow("alice", workflow.StatusRunning)
			env.store.put(w)
			path := tt.path(env, w)
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				defer close(done)
				env.srv.Routes().ServeHTTP(rw, r)
			}))
			t.Cleanup(srv.Close)
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", path, aliceToken)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the handler still writes to a client that stopped reading 30s ago")
			}
		})
	}
}
