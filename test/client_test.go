package test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// newClient is a client of g as the user with token.
func newClient(t testing.TB, g *gateway, token string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(g.url, token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestClientPreferWait: against the built gateway, a create that asks to
// wait gets the round's messages when it finishes in time (200,
// Preference-Applied), and the running workflow at the deadline (201)
// when the model is held; Run then follows the events to the answer.
func TestClientPreferWait(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	c := newClient(t, g, gwAlice)
	ctx := testCtx(t)

	res, err := c.Create(ctx, client.CreateRequest{Prompt: "wait1 write a note", Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Waited || res.Status != "completed" || len(res.Messages) != 3 || res.Answer() != "final answer for wait1" {
		t.Errorf("waited create = %+v", res)
	}

	model.blockNext("wait2")
	start := time.Now()
	res, err = c.Create(ctx, client.CreateRequest{Prompt: "wait2 write a note", Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Waited || res.Status != "running" || len(res.Messages) != 0 {
		t.Errorf("create past its wait = %+v, want the running workflow without messages", res)
	}
	if time.Since(start) < time.Second {
		t.Errorf("answered after %s, before the 1 s it was asked to wait", time.Since(start))
	}
	model.waitBlocked(t, 1)
	model.releaseBlocked()
	done, err := c.Wait(ctx, res.ID, 0, nil)
	if err != nil || done.Status != "completed" || done.Answer() != "final answer for wait2" {
		t.Errorf("Wait = %+v, %v", done, err)
	}

	run, err := newClient(t, g, gwAlice, client.WithRunWait(time.Second)).Run(ctx, "wait3 summarise",
		client.Upload{Name: "n.txt", Content: strings.NewReader("some notes")})
	if err != nil || run.Answer() != "final answer for wait3" || run.Messages[1].Action != "document.extract" {
		t.Errorf("Run = %+v, %v", run, err)
	}
}

// dropProxy forwards to the gateway and cuts the first event stream
// right after its first message, as a restarting proxy would.
func dropProxy(t *testing.T, target string, dropped *atomic.Int32) string {
	u, _ := url.Parse(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI = u.Scheme, u.Host, ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		cut := strings.HasSuffix(r.URL.Path, "/events") && dropped.CompareAndSwap(0, 1)
		buf := make([]byte, 32<<10)
		var seen bytes.Buffer
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
			seen.Write(buf[:n])
			if cut && bytes.Contains(seen.Bytes(), []byte("event: message")) && bytes.HasSuffix(seen.Bytes(), []byte("\n\n")) {
				dropped.Store(2)
				panic(http.ErrAbortHandler)
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestClientEventsReconnect: the event stream is cut mid-round after its
// first message; Events reconnects with Last-Event-ID and every message
// of the round arrives exactly once, in order, then the final status.
func TestClientEventsReconnect(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	var dropped atomic.Int32
	c, err := client.New(dropProxy(t, g.url, &dropped), gwAlice)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	model.blockNext("drop1") // hold the round after its user message
	wf, err := c.Create(ctx, client.CreateRequest{Prompt: "drop1 write a note"})
	if err != nil {
		t.Fatal(err)
	}
	model.waitBlocked(t, 1)
	go func() { // the round goes on only after the cut
		for dropped.Load() != 2 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		model.releaseBlocked()
	}()
	var ids []string
	var last *client.Workflow
	for ev, err := range c.Events(ctx, wf.ID) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "message":
			ids = append(ids, ev.ID+":"+ev.Message.Role)
		case "status":
			last = ev.Workflow
		}
	}
	if dropped.Load() != 2 {
		t.Fatal("the stream was never cut: the test proves nothing")
	}
	if got := strings.Join(ids, ","); got != "1:user,2:action,3:assistant" {
		t.Errorf("messages = %s, want 1:user,2:action,3:assistant once each", got)
	}
	if last == nil || last.Status != "completed" {
		t.Errorf("last status = %+v", last)
	}
}

// TestClientEveryRoute drives every /api/v1 route of the built gateway
// through the client, with problems decoded: 404 for another user's
// workflow, 409s, a 422 naming its field, 429 with Retry-After.
func TestClientEveryRoute(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	c := newClient(t, g, gwAlice)
	bob := newClient(t, g, gwBob)
	ctx := testCtx(t)

	res, err := c.Create(ctx, client.CreateRequest{Prompt: "route1 summarise", Mode: "react", MaxSteps: 4, Wait: 20 * time.Second,
		Documents: []client.Upload{{Name: "brief.txt", Content: strings.NewReader("the brief")}}})
	if err != nil || !res.Waited || res.Answer() != "final answer for route1" || res.MaxSteps != 4 {
		t.Fatalf("Create = %+v, %v", res, err)
	}
	id := res.ID
	if w, err := c.Get(ctx, id); err != nil || w.Status != "completed" || w.UserID != "alice" {
		t.Errorf("Get = %+v, %v", w, err)
	}
	if page, err := c.List(ctx, client.ListOptions{Status: "completed", Limit: 5}); err != nil || len(page.Workflows) != 1 || page.Workflows[0].ID != id {
		t.Errorf("List = %+v, %v", page, err)
	}
	msgs, err := c.Messages(ctx, id, 1)
	if err != nil || len(msgs) != 2 || msgs[0].Seq != 2 || len(res.Messages[0].Documents) != 1 {
		t.Fatalf("Messages(after 1) = %+v, %v", msgs, err)
	}
	body, ctype, err := c.Document(ctx, id, res.Messages[0].Documents[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if string(data) != "the brief" || !strings.HasPrefix(ctype, "text/plain") {
		t.Errorf("Document = %q (%s)", data, ctype)
	}
	if acts, err := c.Actions(ctx); err != nil || len(acts) < 4 {
		t.Errorf("Actions = %d, %v", len(acts), err)
	}
	if _, err := c.Stop(ctx, id); !client.IsConflict(err) {
		t.Errorf("Stop of a finished round = %v, want 409", err)
	}
	if _, err := c.Resume(ctx, id); !client.IsConflict(err) {
		t.Errorf("Resume of a completed round = %v, want 409", err)
	}
	if _, err := c.Decide(ctx, id, "apr_none", client.Decision{Approve: true}, 0); !client.IsConflict(err) {
		t.Errorf("Decide with nothing pending = %v, want 409", err)
	}
	if _, err := bob.Get(ctx, id); !client.IsNotFound(err) {
		t.Errorf("bob's Get = %v, want 404", err)
	}
	var p *client.Problem
	_, err = c.StartRound(ctx, id, " ", 0)
	if !errors.As(err, &p) || p.Status != 422 || len(p.Errors) != 1 || p.Errors[0].Location != "body.prompt" {
		t.Errorf("blank prompt = %v, want a 422 naming body.prompt", err)
	}

	model.blockNext("route2")
	next, err := c.StartRound(ctx, id, "route2 write a note", 0)
	if err != nil || next.Round != 2 || next.Status != "running" {
		t.Fatalf("StartRound = %+v, %v", next, err)
	}
	model.waitBlocked(t, 1)
	if _, err := c.StartRound(ctx, id, "again", 0); !client.IsConflict(err) {
		t.Errorf("a round while one runs = %v, want 409", err)
	}
	if w, err := c.Stop(ctx, id); err != nil || w.Status != "stopped" {
		t.Errorf("Stop = %+v, %v", w, err)
	}
	// bob fills his running rounds (4) with held ones: a fifth is 429.
	for i := range 4 {
		model.blockNext("busy" + string(rune('a'+i)))
	}
	for i := range 4 {
		if _, err := bob.Create(ctx, client.CreateRequest{Prompt: "busy" + string(rune('a'+i)) + " go"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = bob.Create(ctx, client.CreateRequest{Prompt: "one too many"})
	if !errors.As(err, &p) || p.Status != 429 || p.RetryAfter <= 0 {
		t.Errorf("fifth running round = %v (%+v), want 429 with Retry-After", err, p)
	}
	model.releaseBlocked()
	if w, err := c.Resume(ctx, id); err != nil || w.Status != "running" {
		t.Errorf("Resume = %+v, %v", w, err)
	}
	if done, err := c.Wait(ctx, id, 3, nil); err != nil || done.Round != 2 || done.Answer() != "final answer for route2" {
		t.Errorf("Wait after resume = %+v, %v", done, err)
	}

	if err := c.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Messages(ctx, id, 0); !client.IsNotFound(err) {
		t.Errorf("Messages after Delete = %v, want 404", err)
	}
}

// TestPreferWaitAcrossInstances (Redis): Prefer: wait on an API-only
// instance answers with the round's messages while the round runs on a
// worker instance, for a create and for an approval-free next round.
func TestPreferWaitAcrossInstances(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	api := startGatewayWith(t, model, []string{"serve", "--workers=0"}, "REDIS_URL="+url)
	startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url)
	c := api.client(t, gwAlice)
	ctx := testCtx(t)
	res, err := c.Create(ctx, client.CreateRequest{Prompt: "xwait1 write a note", Wait: 20 * time.Second})
	if err != nil || !res.Waited || res.Answer() != "final answer for xwait1" {
		t.Fatalf("waited create on the API instance = %+v, %v", res, err)
	}
	next, err := c.StartRound(ctx, res.ID, "xwait2 again", 20*time.Second)
	if err != nil || !next.Waited || next.Round != 2 || next.Answer() != "final answer for xwait2" || next.Messages[0].Round != 2 {
		t.Errorf("waited round on the API instance = %+v, %v", next, err)
	}
	if err := c.Delete(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
}
