package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// dropFirstStream cuts the first event stream's connection right after its
// first message event, as a proxy or a restarting instance would.
func dropFirstStream(dropped *atomic.Int32) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") && dropped.CompareAndSwap(0, 1) {
				w = &cutter{ResponseWriter: w}
			}
			next.ServeHTTP(w, r)
		})
	}
}

type cutter struct{ http.ResponseWriter }

func (c *cutter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	if bytes.Contains(p, []byte("event: message")) {
		c.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-round
	}
	return n, err
}

func (c *cutter) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

// TestEventsReconnectWithoutLossOrDuplicates: a stream dropped after its
// first message is reopened with Last-Event-ID; every message of the round
// arrives exactly once, in seq order, and the sequence ends with the round.
func TestEventsReconnectWithoutLossOrDuplicates(t *testing.T) {
	t.Parallel()
	var dropped atomic.Int32
	gw := startGateway(30*time.Millisecond, dropFirstStream(&dropped))
	defer gw.close()
	c, err := client.New(gw.url, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wf, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note, then tell me the answer"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var roles []string
	var last *client.Workflow
	for ev, err := range c.Events(ctx, wf.ID) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "message":
			seqs = append(seqs, ev.Message.Seq)
			roles = append(roles, ev.Message.Role)
		case "status":
			last = ev.Workflow
		}
	}
	if dropped.Load() != 1 {
		t.Fatal("the stream was never dropped: the test proves nothing")
	}
	if strings.Join(roles, ",") != "user,action,assistant" || len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
		t.Errorf("messages %v with seqs %v, want user, action, assistant once each at 1, 2, 3", roles, seqs)
	}
	if last == nil || last.Status != "completed" {
		t.Errorf("last status = %+v, want completed", last)
	}
}

// TestEveryRoute drives each /api/v1 route through the client: waiting
// and not, listing by status, messages, a document's bytes, actions,
// stop and resume conflicts, an approval decision on a round that is not
// paused, another user's 404, field errors, and delete.
func TestEveryRoute(t *testing.T) {
	t.Parallel()
	gw := startGateway(0, nil)
	defer gw.close()
	c, _ := client.New(gw.url, aliceToken)
	bob, _ := client.New(gw.url, bobToken)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	res, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note", Wait: 10 * time.Second,
		Documents: []client.Upload{{Name: "brief.txt", Content: strings.NewReader("the brief")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Waited || res.Status != "completed" || res.Answer() != "The answer is 42." || len(res.Messages) != 3 {
		t.Fatalf("waited create = %+v", res)
	}
	id := res.ID
	if got, err := c.Get(ctx, id); err != nil || got.Title != "Write a note" {
		t.Errorf("Get = %+v, %v", got, err)
	}
	page, err := c.List(ctx, client.ListOptions{Status: "completed", Limit: 10})
	if err != nil || len(page.Workflows) != 1 || page.Workflows[0].ID != id {
		t.Errorf("List(completed) = %+v, %v", page, err)
	}
	if page, err := c.List(ctx, client.ListOptions{Status: "running"}); err != nil || len(page.Workflows) != 0 {
		t.Errorf("List(running) = %+v, %v", page, err)
	}
	msgs, err := c.Messages(ctx, id, 1)
	if err != nil || len(msgs) != 2 || msgs[0].Seq != 2 {
		t.Fatalf("Messages(after 1) = %+v, %v", msgs, err)
	}
	body, ctype, err := c.Document(ctx, id, msgs[0].Documents[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if string(data) != "# Note" || !strings.HasPrefix(ctype, "text/markdown") {
		t.Errorf("Document = %q (%s)", data, ctype)
	}
	acts, err := c.Actions(ctx)
	if err != nil || len(acts) < 4 {
		t.Errorf("Actions = %d, %v", len(acts), err)
	}
	// The typed list carries what the route sends: an action's connection
	// kind and document need (http.request needs an http connection).
	i := slices.IndexFunc(acts, func(a client.Action) bool { return a.Name == "http.request" })
	if i < 0 || acts[i].Connection != "http" || !acts[i].ConnectionRequired || acts[i].Documents == "" {
		t.Errorf("http.request in %+v, want it listed with its connection and document need", acts)
	}
	if _, err := c.Stop(ctx, id); !client.IsConflict(err) {
		t.Errorf("Stop of a finished round = %v, want a 409", err)
	}
	if _, err := c.Resume(ctx, id); !client.IsConflict(err) {
		t.Errorf("Resume of a completed round = %v, want a 409", err)
	}
	if _, err := c.Decide(ctx, id, "apr_none", client.Decision{Approve: true}, 0); !client.IsConflict(err) {
		t.Errorf("Decide with nothing pending = %v, want a 409", err)
	}
	if _, err := bob.Get(ctx, id); !client.IsNotFound(err) {
		t.Errorf("bob's Get = %v, want a 404", err)
	}
	next, err := c.StartRound(ctx, id, "again", 0)
	if err != nil || next.Waited || next.Round != 2 {
		t.Errorf("StartRound without waiting = %+v, %v", next, err)
	}
	_, err = c.Create(ctx, client.CreateRequest{Prompt: "x", Documents: []client.Upload{{Name: "../up.txt", Content: strings.NewReader("x")}}})
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 422 || len(p.Errors) != 1 || p.Errors[0].Location != "body.documents[0].name" {
		t.Errorf("bad upload = %v, want a 422 naming body.documents[0].name", err)
	}
	for ev, err := range c.Events(ctx, id) { // wait for round 2 to end before deleting
		if err != nil {
			t.Fatal(err)
		}
		_ = ev
	}
	if err := c.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, id); !client.IsNotFound(err) {
		t.Errorf("Get after Delete = %v, want a 404", err)
	}
}

// TestRunFollowsEventsPastTheWait: when the round outlasts the wait, Run
// follows the event stream to the answer.
func TestRunFollowsEventsPastTheWait(t *testing.T) {
	t.Parallel()
	gw := startGateway(400*time.Millisecond, nil)
	defer gw.close()
	c, _ := client.New(gw.url, aliceToken, client.WithRunWait(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Waiting one second answers 201 while the round (4 slow calls) runs.
	r, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note, then answer", Wait: time.Second})
	if err != nil || r.Waited || r.Status != "running" {
		t.Fatalf("short wait = %+v, %v; want a running workflow", r, err)
	}
	res, err := c.Run(ctx, "Write a note, then answer")
	if err != nil || res.Answer() != "The answer is 42." || res.Status != "completed" {
		t.Errorf("Run = %+v, %v", res, err)
	}
}

// TestUploadBodyIsTheJSONItClaims: the body built in one buffer is the
// same JSON that marshalling the fields would give, escaping included,
// and a reader's error is reported with the document's name.
func TestUploadBodyIsTheJSONItClaims(t *testing.T) {
	t.Parallel()
	gw := startGateway(0, nil)
	defer gw.close()
	c, _ := client.New(gw.url, aliceToken)
	ctx := context.Background()
	res, err := c.Create(ctx, client.CreateRequest{Prompt: `say "hi" </script>`, MaxSteps: 3, Wait: 10 * time.Second,
		Documents: []client.Upload{
			{Name: `q"uote.txt`, MimeType: "text/plain", Content: strings.NewReader("one")},
			{Name: "empty.bin"},
			{Name: "é.md", Content: strings.NewReader("# three")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != `say "hi" </script>` || res.MaxSteps != 3 {
		t.Errorf("workflow = %+v", res.WorkflowView)
	}
	docs := res.Messages[0].Documents
	if len(docs) != 3 || docs[0].Name != `q"uote.txt` || docs[1].Size != 0 || docs[2].Name != "é.md" || docs[2].MimeType != "text/markdown; charset=utf-8" {
		t.Fatalf("documents = %+v", docs)
	}
	body, _, err := c.Document(ctx, res.ID, docs[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if string(data) != "# three" {
		t.Errorf("third document = %q", data)
	}
	_, err = c.Create(ctx, client.CreateRequest{Prompt: "x", Documents: []client.Upload{{Name: "bad.txt", Content: errReader{}}}})
	if err == nil || !strings.Contains(err.Error(), "reading bad.txt") {
		t.Errorf("a failing reader = %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// TestListAllFollowsPages: three workflows listed two per page arrive
// once each, newest first; a problem ends the sequence with it.
func TestListAllFollowsPages(t *testing.T) {
	t.Parallel()
	gw := startGateway(0, nil)
	defer gw.close()
	c, _ := client.New(gw.url, aliceToken)
	ctx := context.Background()
	var want []string
	for _, p := range []string{"one", "two", "three"} {
		r, err := c.Create(ctx, client.CreateRequest{Prompt: p, Wait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{r.ID}, want...)
	}
	var got []string
	for w, err := range c.ListAll(ctx, client.ListOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ListAll = %v, want %v", got, want)
	}
	for _, err := range c.ListAll(ctx, client.ListOptions{Cursor: "not-a-cursor"}) {
		var p *client.Problem
		if !errors.As(err, &p) || p.Status != 422 {
			t.Errorf("a bad cursor = %v, want a 422 problem", err)
		}
	}
}
