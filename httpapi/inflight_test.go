package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestInflightGate: a take fits the total, the user's share and the
// connection's share, or reserves nothing; give returns it all.
func TestInflightGate(t *testing.T) {
	t.Parallel()
	g := &inflightGate{limit: 100, perUser: 50, perConn: 30, users: map[string]int64{}, conns: map[string]int64{}}
	steps := []struct {
		user, conn string
		n          int64
		want       bool
	}{
		{"alice", "c1", 30, true},
		{"alice", "c1", 1, false}, // connection full
		{"alice", "c2", 20, true},
		{"alice", "c3", 1, false}, // alice's share full
		{"bob", "c4", 30, true},
		{"bob", "c5", 20, true},
		{"carol", "c6", 1, false}, // the total full
	}
	for i, s := range steps {
		if got := g.take(s.user, s.conn, s.n); got != s.want {
			t.Fatalf("step %d: take(%s, %s, %d) = %v, want %v", i, s.user, s.conn, s.n, got, s.want)
		}
	}
	if total, alice := g.held("alice"); total != 100 || alice != 50 {
		t.Errorf("held = %d total, %d alice; want 100, 50", total, alice)
	}
	for _, s := range steps {
		if s.want {
			g.give(s.user, s.conn, s.n)
		}
	}
	if total, _ := g.held("alice"); total != 0 || len(g.users) != 0 || len(g.conns) != 0 {
		t.Errorf("after give: total %d, users %v, conns %v", total, g.users, g.conns)
	}
}

// post sends a create from the connection remote.
func post(env *testEnv, remote, token string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/api/v1/workflows", body)
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	env.srv.Routes().ServeHTTP(rec, req)
	return rec
}

// TestInflightShares: while alice's body is held, her second one is
// refused (her share is one body) but bob's is taken; with both held the
// process-wide budget refuses a third user's; once they are answered
// everything is given back.
func TestInflightShares(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) {
		o.Limits.MaxBodyBytes = 4096
		o.Limits.MaxInflightUploadBytes = 8192
		o.Limits.MaxInflightUploadBytesPerUser = 4096
	})
	release := make(chan struct{})
	entered := make(chan struct{}, 3)
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		entered <- struct{}{}
		<-release
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	body := `{"prompt":"` + strings.Repeat("x", 3000) + `"}`
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, tok := range []string{aliceToken, bobToken} {
		wg.Go(func() { codes[i] = post(env, "10.0.0.1:"+string(rune('1'+i)), tok, strings.NewReader(body)).Code })
		<-entered
	}
	for _, tt := range []struct{ name, remote, token string }{
		{"alice again", "10.0.0.1:9", aliceToken},
		{"a third user", "10.0.0.1:8", adminToken},
	} {
		rec := post(env, tt.remote, tt.token, strings.NewReader(body))
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d (Retry-After %q), want 503 with Retry-After", tt.name, rec.Code, rec.Header().Get("Retry-After"))
		}
		problem(t, rec)
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusCreated || codes[1] != http.StatusCreated {
		t.Errorf("the admitted uploads answered %v, want 201 each", codes)
	}
	if total, _ := env.srv.inflight.held(""); total != 0 {
		t.Errorf("%d bytes still held after every answer", total)
	}
}

// trickle yields one byte of s per read, pausing between reads.
type trickle struct {
	s     string
	pause time.Duration
}

func (r *trickle) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	p[0], r.s = r.s[0], r.s[1:]
	return 1, nil
}

// TestSlowBodyIsDropped: a body slower than the minimum rate is answered
// 408 once the grace period is over, on an upload route and on a route
// huma reads, and holds nothing afterwards.
func TestSlowBodyIsDropped(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) {
		o.Limits.MinUploadBytesPerSecond = 1000
		o.Limits.UploadRateGrace = 50 * time.Millisecond
	})
	w := testWorkflow("alice", workflow.StatusAwaitingApproval)
	env.store.put(w)
	body := `{"prompt":"` + strings.Repeat("x", 500) + `"}`
	for _, path := range []string{"/api/v1/workflows", "/api/v1/workflows/" + w.ID + "/approvals/apr_1"} {
		req := httptest.NewRequest("POST", path, &trickle{s: body, pause: 10 * time.Millisecond})
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		rec := httptest.NewRecorder()
		env.srv.Routes().ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestTimeout {
			t.Errorf("%s: %d %s, want 408", path, rec.Code, rec.Body)
		}
	}
	if total, _ := env.srv.inflight.held(""); total != 0 {
		t.Errorf("%d bytes still held", total)
	}
}

// TestInflightKnobDefaults: the per-user share defaults to a quarter of
// the budget but never below one full body; a share outside [body,
// budget] or a negative rate is refused.
func TestInflightKnobDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		in          Limits
		wantPerUser int64
		wantErr     bool
	}{
		{"defaults", Limits{}, 32 << 20, false},
		{"small bodies", Limits{MaxBodyBytes: 1 << 20}, 32 << 20, false},
		{"large bodies", Limits{MaxBodyBytes: 64 << 20}, 64 << 20, false},
		{"share below a body", Limits{MaxInflightUploadBytesPerUser: 1 << 20}, 0, true},
		{"share above the budget", Limits{MaxInflightUploadBytesPerUser: 256 << 20}, 0, true},
		{"negative rate", Limits{MinUploadBytesPerSecond: -1}, 0, true},
	} {
		got, err := tt.in.withDefaults()
		if (err != nil) != tt.wantErr || !tt.wantErr && got.MaxInflightUploadBytesPerUser != tt.wantPerUser {
			t.Errorf("%s: per user %d, err %v; want %d, error %v", tt.name, got.MaxInflightUploadBytesPerUser, err, tt.wantPerUser, tt.wantErr)
		}
		if err == nil && (got.MinUploadBytesPerSecond != 8<<10 || got.UploadRateGrace != 5*time.Second) {
			t.Errorf("%s: rate defaults %d, %v", tt.name, got.MinUploadBytesPerSecond, got.UploadRateGrace)
		}
	}
}

// TestBodyDeadlineEndsWithTheBody: the rate deadline capInflight sets on
// the connection is lifted once the body is read. Left in place, it cuts
// the server's background read of the connection while the handler runs,
// and net/http then cancels the request's context: a POST with
// Prefer: wait would be cut short once the grace period is over.
//
// The test records the read deadlines set on the real connection rather
// than waiting for one to pass: a grace short enough to pass within the
// test is also short enough for a loaded machine to pass it while the body
// is still being read (a 408) or between the body's end and the lift (the
// context cancelled by the very background read under test).
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	limits := Limits{MinUploadBytesPerSecond: 1 << 20, UploadRateGrace: time.Hour,
		MaxBodyBytes: 1 << 20, MaxInflightUploadBytes: 1 << 20, MaxInflightUploadBytesPerUser: 1 << 20}
	s := &Server{limits: limits, inflight: newInflightGate(limits)}
	r := gin.New()
	r.Use(s.capInflight())
	deadlines := make(chan []time.Time, 1)
	r.POST("/wait", func(c *gin.Context) {
		if _, err := io.ReadAll(c.Request.Body); err != nil {
			t.Errorf("read the body: %v", err)
		}
		c.String(http.StatusOK, "read")
	})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &deadlineRecorder{ResponseWriter: w}
		r.ServeHTTP(rec, req)
		deadlines <- rec.set
	}))
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/wait", "application/json", strings.NewReader(`{"prompt":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, _ := io.ReadAll(resp.Body); string(got) != "read" {
		t.Fatalf("answer %q, want the body read", got)
	}
	if set := <-deadlines; len(set) < 2 || set[0].IsZero() || !set[len(set)-1].IsZero() {
		t.Errorf("read deadlines set %v, want the rate deadline and then none", set)
	}
}

// deadlineRecorder records the read deadlines set through an
// http.ResponseController and sets them on the connection it wraps.
type deadlineRecorder struct {
	http.ResponseWriter
	set []time.Time
}

// SetReadDeadline records t and sets it on the connection.
func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	d.set = append(d.set, t)
	return http.NewResponseController(d.ResponseWriter).SetReadDeadline(t)
}

// Unwrap returns the wrapped writer, for the other controls.
func (d *deadlineRecorder) Unwrap() http.ResponseWriter { return d.ResponseWriter }
