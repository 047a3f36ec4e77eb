package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// userReads is what both *engine.Reader and *engine.Engine serve.
type userReads interface {
	Get(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error)
	Messages(ctx context.Context, userID, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
	MessagesOf(ctx context.Context, userID string, wf *workflow.Workflow, after int64, limit int) ([]workflow.Message, error)
	Document(ctx context.Context, userID, wfID, docID string) (workflow.DocumentContent, error)
	Admin() *engine.AdminReader
}

// readFixture is a store holding a workflow of alice's (two messages, the
// first with a document, and a trace) and one of bob's (with a document).
type readFixture struct {
	store      workflow.Store
	alice, bob *workflow.Workflow
	aliceDoc   workflow.DocumentContent
	bobDoc     workflow.DocumentContent
	trace      workflow.Trace
}

func newReadFixture(t *testing.T, store workflow.Store) readFixture {
	t.Helper()
	f := readFixture{store: store}
	f.alice, f.aliceDoc = seedRead(t, store, "alice", "notes.txt", 1)
	f.bob, f.bobDoc = seedRead(t, store, "bob", "secret.txt", 2)
	f.trace = workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: f.alice.ID, Round: 1, Step: 1,
		Stage: workflow.StageOne, Attempt: 1, Response: "{}", CreatedAt: f.alice.CreatedAt}
	if err := store.AppendTrace(context.Background(), f.trace); err != nil {
		t.Fatal(err)
	}
	return f
}

// seedRead commits a stopped workflow of user created at minute, with a
// user message carrying one document and an assistant reply.
func seedRead(t *testing.T, store workflow.Store, user, docName string, minute int) (*workflow.Workflow, workflow.DocumentContent) {
	t.Helper()
	at := time.Date(2026, 11, 25, 12, minute, 0, 0, time.UTC)
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact,
		Status: workflow.StatusStopped, StopReason: workflow.StopStopped, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: at, UpdatedAt: at}
	msgID := workflow.NewID(workflow.PrefixMessage)
	doc := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), WorkflowID: wf.ID,
		MessageID: msgID, Name: docName, MimeType: "text/plain", Size: 5}, Content: []byte(user[:3] + "!!")}
	msgs := []workflow.Message{
		{ID: msgID, Round: 1, Role: workflow.RoleUser, Text: "hello from " + user, Documents: []workflow.Document{doc.Document}, CreatedAt: at},
		{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleAssistant, Text: "hi " + user, CreatedAt: at},
	}
	stored, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: wf, Messages: msgs, Documents: []workflow.DocumentContent{doc}})
	if err != nil {
		t.Fatal(err)
	}
	return stored, doc
}

// readers returns the reads over f.store: a Reader, and an engine's.
func readers(t *testing.T, f readFixture) map[string]userReads {
	return map[string]userReads{
		"Reader": engine.NewReader(f.store),
		"Engine": newEngine(t, engine.Config{}, f.store, scripted.New(), callThenComplete),
	}
}

func TestReadsServeTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newReadFixture(t, memstore.New())
	for name, r := range readers(t, f) {
		t.Run(name, func(t *testing.T) {
			wf, err := r.Get(ctx, "alice", f.alice.ID)
			if err != nil || wf.ID != f.alice.ID || wf.UserID != "alice" {
				t.Fatalf("Get = %v, %v; want alice's workflow", wf, err)
			}
			wf, msgs, err := r.Messages(ctx, "alice", f.alice.ID, 0, 0)
			if err != nil || wf.ID != f.alice.ID {
				t.Fatalf("Messages: workflow %v, %v; want alice's", wf, err)
			}
			if got := texts(msgs); !slices.Equal(got, []string{"hello from alice", "hi alice"}) {
				t.Errorf("Messages = %q, want both of alice's in seq order", got)
			}
			if _, msgs, _ := r.Messages(ctx, "alice", f.alice.ID, 1, 0); !slices.Equal(texts(msgs), []string{"hi alice"}) {
				t.Errorf("Messages after seq 1 = %q, want the reply only", texts(msgs))
			}
			if _, msgs, _ := r.Messages(ctx, "alice", f.alice.ID, 0, 1); !slices.Equal(texts(msgs), []string{"hello from alice"}) {
				t.Errorf("Messages limit 1 = %q, want the first only", texts(msgs))
			}
			if msgs, err := r.MessagesOf(ctx, "alice", f.alice, 1, 0); err != nil || !slices.Equal(texts(msgs), []string{"hi alice"}) {
				t.Errorf("MessagesOf(alice's, after seq 1) = %q, %v; want the reply only", texts(msgs), err)
			}
			doc, err := r.Document(ctx, "alice", f.alice.ID, f.aliceDoc.ID)
			if err != nil || doc.Name != "notes.txt" || string(doc.Content) != "ali!!" {
				t.Errorf("Document = %+v, %v; want notes.txt with its bytes", doc, err)
			}
			ws, next, err := r.List(ctx, "alice", workflow.Page{Limit: 10})
			if err != nil || next != "" || len(ws) != 1 || ws[0].ID != f.alice.ID {
				t.Errorf("List = %v, %q, %v; want alice's one workflow", ids(ws), next, err)
			}
		})
	}
}

// TestReadsHideOtherUsers: another user's workflow answers exactly like an
// unknown or a malformed id, on every read.
func TestReadsHideOtherUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newReadFixture(t, memstore.New())
	unknown := workflow.NewID(workflow.PrefixWorkflow)
	for name, r := range readers(t, f) {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{f.bob.ID, unknown, "wf_../../etc", ""} {
				want := workflow.PublicMessage(workflow.NoWorkflow(id))
				_, err := r.Get(ctx, "alice", id)
				checkNotFound(t, "Get("+id+")", err, want)
				wf, msgs, err := r.Messages(ctx, "alice", id, 0, 0)
				checkNotFound(t, "Messages("+id+")", err, want)
				if wf != nil || msgs != nil {
					t.Errorf("Messages(%s) leaked %v, %v", id, wf, msgs)
				}
				doc, err := r.Document(ctx, "alice", id, f.bobDoc.ID)
				checkNotFound(t, "Document("+id+")", err, want)
				if doc.Content != nil {
					t.Errorf("Document(%s) leaked %q", id, doc.Content)
				}
			}
			// A workflow in hand that is not alice's: bob's answers like
			// Get of his id; none at all like an empty id.
			for _, held := range []*workflow.Workflow{f.bob, nil} {
				id := ""
				if held != nil {
					id = held.ID
				}
				msgs, err := r.MessagesOf(ctx, "alice", held, 0, 0)
				checkNotFound(t, "MessagesOf("+id+")", err, workflow.PublicMessage(workflow.NoWorkflow(id)))
				if msgs != nil {
					t.Errorf("MessagesOf(%s) leaked %v", id, msgs)
				}
			}
			// bob's document asked for through alice's own workflow, and
			// ids that are no document of hers.
			for _, docID := range []string{f.bobDoc.ID, workflow.NewID(workflow.PrefixDocument), "doc_/x"} {
				doc, err := r.Document(ctx, "alice", f.alice.ID, docID)
				if workflow.KindOf(err) != workflow.KindNotFound || doc.Content != nil {
					t.Errorf("Document(alice's workflow, %s) = %q, %v; want not found", docID, doc.Content, err)
				}
			}
			// No user id sees nothing, not every workflow.
			if _, err := r.Get(ctx, "", f.alice.ID); workflow.KindOf(err) != workflow.KindNotFound {
				t.Errorf("Get with no user: %v, want not found", err)
			}
			if ws, _, err := r.List(ctx, "bob", workflow.Page{Limit: 10}); err != nil || len(ws) != 1 || ws[0].ID != f.bob.ID {
				t.Errorf("List(bob) = %v, %v; want bob's one workflow", ids(ws), err)
			}
		})
	}
}

func checkNotFound(t *testing.T, what string, err error, want string) {
	t.Helper()
	if workflow.KindOf(err) != workflow.KindNotFound || workflow.PublicMessage(err) != want {
		t.Errorf("%s: %v (kind %q), want not found saying %q", what, err, workflow.KindOf(err), want)
	}
}

// TestAdminReadsSeeEveryUser: the admin scope reads any user's workflow,
// and still answers unknown and malformed ids with not found.
func TestAdminReadsSeeEveryUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newReadFixture(t, memstore.New())
	for name, r := range readers(t, f) {
		t.Run(name, func(t *testing.T) {
			a := r.Admin()
			if wf, err := a.Get(ctx, f.bob.ID); err != nil || wf.UserID != "bob" {
				t.Errorf("Get(bob's) = %v, %v", wf, err)
			}
			if wf, msgs, err := a.Messages(ctx, f.bob.ID, 0, 0); err != nil || wf.ID != f.bob.ID || !slices.Equal(texts(msgs), []string{"hello from bob", "hi bob"}) {
				t.Errorf("Messages(bob's) = %v, %q, %v", wf, texts(msgs), err)
			}
			if doc, err := a.Document(ctx, f.bob.ID, f.bobDoc.ID); err != nil || string(doc.Content) != "bob!!" {
				t.Errorf("Document(bob's) = %q, %v", doc.Content, err)
			}
			if doc, err := a.Document(ctx, f.alice.ID, f.bobDoc.ID); workflow.KindOf(err) != workflow.KindNotFound {
				t.Errorf("bob's document through alice's workflow = %q, %v; want not found", doc.Content, err)
			}
			ts, err := a.Traces(ctx, f.alice.ID)
			if err != nil || len(ts) != 1 || ts[0].ID != f.trace.ID {
				t.Errorf("Traces(alice's) = %v, %v; want the one trace", ts, err)
			}
			if tr, err := a.Trace(ctx, f.trace.ID); err != nil || tr.WorkflowID != f.alice.ID {
				t.Errorf("Trace = %+v, %v", tr, err)
			}
			all, _, err := a.List(ctx, "", workflow.Page{Limit: 10})
			if diff := cmp.Diff([]string{f.bob.ID, f.alice.ID}, ids(all)); err != nil || diff != "" {
				t.Errorf("List(every user), newest first: %v (-want +got)\n%s", err, diff)
			}
			if ws, _, err := a.List(ctx, "alice", workflow.Page{Limit: 10}); err != nil || !slices.Equal(ids(ws), []string{f.alice.ID}) {
				t.Errorf("List(alice) = %v, %v", ids(ws), err)
			}
			unknown := workflow.NewID(workflow.PrefixWorkflow)
			for _, id := range []string{unknown, "wf_../x"} {
				if _, err := a.Get(ctx, id); workflow.KindOf(err) != workflow.KindNotFound {
					t.Errorf("Get(%s): %v, want not found", id, err)
				}
				if _, _, err := a.Messages(ctx, id, 0, 0); workflow.KindOf(err) != workflow.KindNotFound {
					t.Errorf("Messages(%s): %v, want not found", id, err)
				}
				if _, err := a.Traces(ctx, id); workflow.KindOf(err) != workflow.KindNotFound {
					t.Errorf("Traces(%s): %v, want not found", id, err)
				}
			}
			for _, id := range []string{workflow.NewID(workflow.PrefixTrace), "tr_../x"} {
				if _, err := a.Trace(ctx, id); workflow.KindOf(err) != workflow.KindNotFound {
					t.Errorf("Trace(%s): %v, want not found", id, err)
				}
			}
		})
	}
}

// orderStore records the order of GetWorkflow and Messages calls.
type orderStore struct {
	workflow.Store
	mu    sync.Mutex
	calls []string
}

func (s *orderStore) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func (s *orderStore) GetWorkflow(ctx context.Context, id string) (*workflow.Workflow, error) {
	s.record("GetWorkflow")
	return s.Store.GetWorkflow(ctx, id)
}

func (s *orderStore) Messages(ctx context.Context, id string, after int64, limit int) ([]workflow.Message, error) {
	s.record("Messages")
	return s.Store.Messages(ctx, id, after, limit)
}

// TestMessagesReadTheWorkflowFirst: the workflow Messages returns was read
// before its messages, which the event stream relies on (a terminal status
// comes with every message committed with it).
func TestMessagesReadTheWorkflowFirst(t *testing.T) {
	t.Parallel()
	store := &orderStore{Store: memstore.New()}
	f := newReadFixture(t, store)
	store.calls = nil
	r := engine.NewReader(store)
	if _, _, err := r.Messages(context.Background(), "alice", f.alice.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Admin().Messages(context.Background(), f.bob.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	if want := []string{"GetWorkflow", "Messages", "GetWorkflow", "Messages"}; !slices.Equal(store.calls, want) {
		t.Errorf("store calls %v, want %v", store.calls, want)
	}
}

func texts(msgs []workflow.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text
	}
	return out
}

func ids(ws []*workflow.Workflow) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}

// leakyStore lists every user's workflows whoever asks, like a store with
// a broken index.
type leakyStore struct{ workflow.Store }

func (s leakyStore) ListWorkflows(ctx context.Context, _ string, p workflow.Page) ([]*workflow.Workflow, string, error) {
	return s.ListAll(ctx, p)
}

// TestListKeepsOnlyTheUsersOwn: List drops what the store should not have
// returned, so a broken index cannot show one user another's workflow.
func TestListKeepsOnlyTheUsersOwn(t *testing.T) {
	t.Parallel()
	store := leakyStore{memstore.New()}
	f := newReadFixture(t, store)
	ws, _, err := engine.NewReader(store).List(context.Background(), "alice", workflow.Page{Limit: 10})
	if err != nil || !slices.Equal(ids(ws), []string{f.alice.ID}) {
		t.Errorf("List(alice) over a leaky store = %v, %v; want alice's only", ids(ws), err)
	}
}
