package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// tenRecordedSteps are the replies of a round of ten steps: nine echoes,
// each step after the first reading the previous one's document, then
// workflow.complete.
func tenRecordedSteps() []string {
	var out []string
	for k := 1; k <= 9; k++ {
		var docs []string
		if k > 1 {
			docs = []string{fmt.Sprintf("docList:round1_step%d_test_echo", k-1)}
		}
		out = append(out, enginetest.Select(enginetest.Echo, fmt.Sprintf("echo s%d", k), docs, "", "text"),
			enginetest.Params(map[string]any{"text": fmt.Sprintf("s%d", k)}))
	}
	return append(out, enginetest.Completes("ten steps done")...)
}

// forkStore is a store to fork on, and (on Redis) a reader of the raw
// records of one workflow: every key it owns, read whole.
type forkStore struct {
	store workflow.Store
	raw   func(t *testing.T, id string) map[string]string
}

// forkStores are the stores the fork test runs on: memory and miniredis
// always, a real Redis and a Redis Cluster when REDIS_URL and
// REDIS_CLUSTER_URL are set (forced on in CI).
func forkStores(t *testing.T) map[string]func(t *testing.T) forkStore {
	onRedis := func(client redis.UniversalClient) func(t *testing.T) forkStore {
		return func(t *testing.T) forkStore {
			prefix := "twostep-forktest:" + workflow.NewID("")
			t.Cleanup(func() { deleteKeys(client, prefix+":*") })
			return forkStore{
				store: redisstore.New(client, redisstore.Options{KeyPrefix: prefix}),
				raw:   func(t *testing.T, id string) map[string]string { return rawRecords(t, client, prefix, id) },
			}
		}
	}
	out := map[string]func(t *testing.T) forkStore{
		"memory":    func(*testing.T) forkStore { return forkStore{store: newStore()} },
		"miniredis": onRedis(redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})),
	}
	for name, env := range map[string]string{"redis": "REDIS_URL", "cluster": "REDIS_CLUSTER_URL"} {
		url := os.Getenv(env)
		switch {
		case url == "" && os.Getenv("CI") != "":
			t.Fatalf("%s is not set; CI must fork on a real Redis", env)
		case url == "":
			continue
		}
		var client redis.UniversalClient
		if name == "cluster" {
			o, err := redis.ParseClusterURL(url)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			client = redis.NewClusterClient(o)
		} else {
			o, err := redis.ParseURL(url)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			client = redis.NewClient(o)
		}
		t.Cleanup(func() { _ = client.Close() })
		out[name] = onRedis(client)
	}
	return out
}

// rawRecords dumps every key of workflow id (its own keys in its user's
// slot, and its owner key) as its type and its whole value, by name.
func rawRecords(t *testing.T, client redis.UniversalClient, prefix, id string) map[string]string {
	t.Helper()
	ctx := context.Background()
	names := []string{prefix + ":owner:{" + id + "}"}
	for _, suffix := range []string{"state", "msgs", "docs", "docmeta", "traces", "tracedata", "lease"} {
		names = append(names, prefix+":{u:alice}:wf:"+id+":"+suffix)
	}
	out := make(map[string]string)
	for _, k := range names {
		typ, err := client.Type(ctx, k).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", k, err)
		}
		var v any
		switch typ {
		case "none":
			continue
		case "string":
			v, err = client.Get(ctx, k).Result()
		case "hash":
			v, err = client.HGetAll(ctx, k).Result()
		case "list":
			v, err = client.LRange(ctx, k, 0, -1).Result()
		case "zset":
			v, err = client.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "set":
			var members []string
			members, err = client.SMembers(ctx, k).Result()
			slices.Sort(members)
			v = members
		default:
			t.Fatalf("key %s has type %s", k, typ)
		}
		if err != nil {
			t.Fatalf("reading %s: %v", k, err)
		}
		out[k] = typ + " " + fmt.Sprintf("%q", v)
	}
	if len(out) < 4 {
		t.Fatalf("found %d keys of %s, want its state, messages, documents and owner at least: %v", len(out), id, slices.Sorted(mapsKeys(out)))
	}
	return out
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// snapshot is everything the store answers about workflow id, as JSON:
// the workflow, its messages, every document's bytes and its traces.
func snapshot(t *testing.T, s workflow.Store, id string) string {
	t.Helper()
	ctx := context.Background()
	wf, err := s.GetWorkflow(ctx, id)
	if err != nil {
		t.Fatalf("GetWorkflow(%s): %v", id, err)
	}
	msgs := messages(t, s, id)
	docs := map[string]string{}
	for _, m := range msgs {
		for _, d := range m.Documents {
			dc, err := s.DocumentContent(ctx, id, d.ID)
			if err != nil {
				t.Fatalf("DocumentContent(%s, %s): %v", id, d.ID, err)
			}
			docs[d.ID] = string(dc.Content)
		}
	}
	traces, err := s.Traces(ctx, id)
	if err != nil {
		t.Fatalf("Traces(%s): %v", id, err)
	}
	b, err := json.Marshal(map[string]any{"workflow": wf, "messages": msgs, "documents": docs, "traces": traces})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// content is a message as a fork must repeat it: everything but the
// workflow it belongs to, with its documents' bytes.
type content struct {
	ID, Text, Action, Objective, Summary string
	Seq                                  int64
	Round, Step                          int
	Role                                 workflow.Role
	Parameters                           map[string]any
	Docs                                 []string // "id name: bytes"
}

func contents(t *testing.T, s workflow.Store, id string, msgs []workflow.Message) []content {
	t.Helper()
	out := make([]content, len(msgs))
	for i, m := range msgs {
		c := content{ID: m.ID, Text: m.Text, Action: m.Action, Objective: m.ActionObjective, Summary: m.Summary,
			Seq: m.Seq, Round: m.Round, Step: m.Step, Role: m.Role, Parameters: m.Parameters}
		for _, d := range m.Documents {
			dc, err := s.DocumentContent(context.Background(), id, d.ID)
			if err != nil {
				t.Fatalf("DocumentContent(%s, %s): %v", id, d.ID, err)
			}
			if d.WorkflowID != id || dc.WorkflowID != id {
				t.Errorf("document %s of %s names workflow %s / %s", d.ID, id, d.WorkflowID, dc.WorkflowID)
			}
			c.Docs = append(c.Docs, d.ID+" "+d.Name+": "+string(dc.Content))
		}
		out[i] = c
	}
	return out
}

// A workflow of ten recorded steps forked at step 4, on every store: the
// fork's messages before step 4 are the original's (text, action,
// parameters, documents' bytes, ids and seqs), its step 4 runs as the
// edit says, the original's stored records are byte-identical before and
// after, and deleting the original leaves the fork whole.
func TestForkAtStepFour(t *testing.T) {
	t.Parallel()
	remote := &workflow.Selection{
		Action: enginetest.Remote, ActionObjective: "call the CRM instead", RequiredConnection: "crm",
		RequiredInputDocuments: []string{"docList:round1_step3_test_echo"},
		ParametersContext:      "what the CRM needs",
		ParametersSchema:       workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "text", Type: "string", Required: true}}},
	}
	cases := []struct {
		name    string
		req     engine.ForkRequest
		replies []string
		// stages are the fork's model calls; step4 its step 4's record.
		stages []workflow.Stage
		step4  shape
		params map[string]any
	}{
		{
			name:    "another action",
			req:     engine.ForkRequest{Round: 1, Step: 4, Selection: remote},
			replies: replies([]string{enginetest.Params(map[string]any{"text": "to crm"})}, enginetest.Completes("forked")),
			stages:  []workflow.Stage{workflow.StageTwo, workflow.StageOne, workflow.StageTwo},
			step4:   shape{1, 4, workflow.RoleAction, enginetest.Remote, workflow.MessageSuccess},
			params:  map[string]any{"text": "to crm"},
		},
		{
			name:    "another action with its parameters",
			req:     engine.ForkRequest{Round: 1, Step: 4, Selection: remote, Parameters: map[string]any{"text": "given"}},
			replies: enginetest.Completes("forked"),
			stages:  []workflow.Stage{workflow.StageOne, workflow.StageTwo},
			step4:   shape{1, 4, workflow.RoleAction, enginetest.Remote, workflow.MessageSuccess},
			params:  map[string]any{"text": "given"},
		},
		{
			name: "another action with nothing to fill",
			req: engine.ForkRequest{Round: 1, Step: 4, Selection: &workflow.Selection{
				Action: enginetest.Remote, ActionObjective: "call the CRM", RequiredConnection: "crm", ParametersContext: "none"}},
			replies: enginetest.Completes("forked"),
			stages:  []workflow.Stage{workflow.StageOne, workflow.StageTwo},
			step4:   shape{1, 4, workflow.RoleAction, enginetest.Remote, workflow.MessageSuccess},
		},
		{
			name:    "edited parameters of the recorded selection",
			req:     engine.ForkRequest{Round: 1, Step: 4, Parameters: map[string]any{"text": "edited"}},
			replies: enginetest.Completes("forked"),
			stages:  []workflow.Stage{workflow.StageOne, workflow.StageTwo},
			step4:   shape{1, 4, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
			params:  map[string]any{"text": "edited"},
		},
		{
			name:    "the step again",
			req:     engine.ForkRequest{Round: 1, Step: 4},
			replies: replies(enginetest.Echoes("again"), enginetest.Completes("forked")),
			stages:  []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageOne, workflow.StageTwo},
			step4:   shape{1, 4, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
			params:  map[string]any{"text": "again"},
		},
	}
	for storeName, newStore := range forkStores(t) {
		for _, tc := range cases {
			t.Run(storeName+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				fs := newStore(t)
				model := scripted.New(replies(tenRecordedSteps(), tc.replies)...)
				reg := enginetest.NewRegistry()
				orig := runOriginal(t, fs.store, model, reg)
				e := startEngine(t, testConfig("fork"), fs.store, model, reg)
				if orig.Status != workflow.StatusCompleted || orig.Step != 10 {
					t.Fatalf("the original ended %s at step %d (%s)", orig.Status, orig.Step, orig.Error)
				}
				before := snapshot(t, fs.store, orig.ID)
				var rawBefore map[string]string
				if fs.raw != nil {
					rawBefore = fs.raw(t, orig.ID)
				}
				calls := len(model.Calls())

				fork, err := e.Fork(context.Background(), "alice", orig.ID, tc.req)
				if err != nil {
					t.Fatalf("Fork: %v", err)
				}
				want := workflow.ForkOrigin{WorkflowID: orig.ID, Round: 1, Step: 4}
				if fork.ForkedFrom != want || fork.UserID != "alice" || fork.ID == orig.ID {
					t.Fatalf("fork %s of %s: forkedFrom %+v, user %s", fork.ID, orig.ID, fork.ForkedFrom, fork.UserID)
				}
				fork = wait(t, e, fork.ID)
				if fork.Status != workflow.StatusCompleted {
					t.Fatalf("the fork ended %s/%s (%s)", fork.Status, fork.StopReason, fork.Error)
				}
				if got := stages(model.Calls()[calls:]); !slices.Equal(got, tc.stages) {
					t.Errorf("the fork's model calls %v, want %v", got, tc.stages)
				}

				origMsgs, forkMsgs := messages(t, fs.store, orig.ID), messages(t, fs.store, fork.ID)
				if len(forkMsgs) != 6 {
					t.Fatalf("the fork has %d messages, want 6: %+v", len(forkMsgs), shapes(forkMsgs))
				}
				kept := contents(t, fs.store, orig.ID, origMsgs[:4])
				if diff := cmp.Diff(kept, contents(t, fs.store, fork.ID, forkMsgs[:4])); diff != "" {
					t.Errorf("the fork's messages before step 4 differ from the original's (-original +fork):\n%s", diff)
				}
				if got := shapes(forkMsgs[4:]); got[0] != tc.step4 || got[1].Role != workflow.RoleAssistant {
					t.Errorf("the fork's step 4 and 5: %+v, want %+v then the answer", got, tc.step4)
				}
				if diff := cmp.Diff(tc.params, forkMsgs[4].Parameters, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("the fork's step 4 parameters (-want +got):\n%s", diff)
				}

				if after := snapshot(t, fs.store, orig.ID); after != before {
					t.Errorf("the original changed:\nbefore %s\nafter  %s", before, after)
				}
				if fs.raw != nil {
					if diff := cmp.Diff(rawBefore, fs.raw(t, orig.ID)); diff != "" {
						t.Errorf("the original's raw records changed (-before +after):\n%s", diff)
					}
				}

				forkBefore := snapshot(t, fs.store, fork.ID)
				if err := e.Delete(context.Background(), "alice", orig.ID); err != nil {
					t.Fatalf("Delete(original): %v", err)
				}
				if _, err := fs.store.GetWorkflow(context.Background(), orig.ID); workflow.KindOf(err) != workflow.KindNotFound {
					t.Fatalf("the original after Delete: %v", err)
				}
				if after := snapshot(t, fs.store, fork.ID); after != forkBefore {
					t.Errorf("deleting the original changed the fork:\nbefore %s\nafter  %s", forkBefore, after)
				}
				if diff := cmp.Diff(kept, contents(t, fs.store, fork.ID, messages(t, fs.store, fork.ID)[:4])); diff != "" {
					t.Errorf("after the original's deletion, the fork's first messages (-original +fork):\n%s", diff)
				}
			})
		}
	}
}

// runOriginal runs the round of ten recorded steps on an engine of its
// own, shut down before it returns: the original's run is over, its
// lease released, so nothing but a fork could change its records.
func runOriginal(t *testing.T, store workflow.Store, model workflow.Model, reg workflow.Registry) *workflow.Workflow {
	t.Helper()
	e, err := enginetest.NewEngine(testConfig("original"), store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	return orig
}

// Refused forks: edits judged as a live step's replies are (references
// resolved in the fork, so a document of step 5 does not resolve at step
// 4), steps the workflow never reached, another user's workflow. Each
// creates nothing and leaves the original as it was.
func TestForkRefused(t *testing.T) {
	t.Parallel()
	model := scripted.New(tenRecordedSteps()...)
	store := newStore()
	e := startEngine(t, testConfig("fork"), store, model, enginetest.NewRegistry())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	before := snapshot(t, store, orig.ID)
	sel := func(edit func(*workflow.Selection)) *workflow.Selection {
		s := &workflow.Selection{Action: enginetest.Echo, ActionObjective: "echo", ParametersContext: "c",
			ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "text", Type: "string", Required: true}}}}
		edit(s)
		return s
	}
	cases := []struct {
		name, user string
		req        engine.ForkRequest
		kind       workflow.Kind
		field      string // the *ForkProblems field, when one is wanted
	}{
		{"a later step's document", "alice", engine.ForkRequest{Round: 1, Step: 4, Selection: sel(func(s *workflow.Selection) {
			s.RequiredInputDocuments = []string{"docList:round1_step5_test_echo"}
		})}, workflow.KindInvalid, "selection"},
		{"an unknown action", "alice", engine.ForkRequest{Round: 1, Step: 4, Selection: sel(func(s *workflow.Selection) { s.Action = "nope.nothing" })},
			workflow.KindInvalid, "selection"},
		{"a forbidden field", "alice", engine.ForkRequest{Round: 1, Step: 4, Selection: sel(func(s *workflow.Selection) {
			s.ParametersSchema.Fields = append(s.ParametersSchema.Fields, workflow.FieldSpec{Name: "documentList", Type: "string"})
		})}, workflow.KindInvalid, "selection"},
		{"a connection the user does not own", "alice", engine.ForkRequest{Round: 1, Step: 4, Selection: sel(func(s *workflow.Selection) {
			s.Action, s.RequiredConnection = enginetest.Remote, "erp"
		})}, workflow.KindInvalid, "selection"},
		{"a parameter not asked for", "alice", engine.ForkRequest{Round: 1, Step: 4, Parameters: map[string]any{"text": "x", "message": "y"}},
			workflow.KindInvalid, "parameters"},
		{"a parameter of the wrong type", "alice", engine.ForkRequest{Round: 1, Step: 4, Selection: sel(func(*workflow.Selection) {}), Parameters: map[string]any{"text": 3}},
			workflow.KindInvalid, "parameters"},
		{"a step never reached", "alice", engine.ForkRequest{Round: 1, Step: 11}, workflow.KindInvalid, ""},
		{"a round never started", "alice", engine.ForkRequest{Round: 2, Step: 1}, workflow.KindInvalid, ""},
		{"step zero", "alice", engine.ForkRequest{Round: 1, Step: 0}, workflow.KindInvalid, ""},
		{"another user's workflow", "bob", engine.ForkRequest{Round: 1, Step: 4}, workflow.KindNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Fork(context.Background(), tc.user, orig.ID, tc.req)
			if workflow.KindOf(err) != tc.kind {
				t.Fatalf("Fork: %v (kind %s), want kind %s", err, workflow.KindOf(err), tc.kind)
			}
			var fp *engine.ForkProblems
			if errors.As(err, &fp) != (tc.field != "") || fp != nil && (fp.Field != tc.field || len(fp.Lines) == 0) {
				t.Errorf("Fork: %v; problems %+v, want field %q", err, fp, tc.field)
			}
		})
	}
	list, _, err := store.ListWorkflows(context.Background(), "alice", workflow.Page{})
	if err != nil || len(list) != 1 {
		t.Errorf("alice has %d workflows (%v), want only the original", len(list), err)
	}
	if after := snapshot(t, store, orig.ID); after != before {
		t.Errorf("the original changed:\nbefore %s\nafter  %s", before, after)
	}
}

// The action-plan mode has no two stages to fork into: its workflows are
// refused with KindInvalid, and so is a step whose selection is no longer
// recorded when only parameters are sent.
func TestForkNeedsTheReactSelection(t *testing.T) {
	t.Parallel()
	store := newStore()
	model := scripted.New(tenRecordedSteps()...)
	e := startEngine(t, testConfig("fork"), store, model, enginetest.NewRegistry())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	// Without traces the recorded selection of a finished step is gone.
	bare := &tracelessStore{Store: store}
	e2 := startEngine(t, testConfig("fork2"), bare, model, enginetest.NewRegistry())
	_, err := e2.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 4, Parameters: map[string]any{"text": "x"}})
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("parameters without a recorded selection: %v, want KindInvalid", err)
	}
	ap := enginetest.StartEngine(t, testConfig("ap"), store, model, enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t), workflow.ModeActionPlan: planOnly{}})
	wf := orig.Clone()
	wf.ID, wf.Mode, wf.Status = workflow.NewID(workflow.PrefixWorkflow), workflow.ModeActionPlan, workflow.StatusCompleted
	if _, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	if _, err := ap.Fork(context.Background(), "alice", wf.ID, engine.ForkRequest{Round: 1, Step: 1}); workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("an action-plan workflow: %v, want KindInvalid", err)
	}
}

// tracelessStore keeps no trace.
type tracelessStore struct{ workflow.Store }

func (tracelessStore) Traces(context.Context, string) ([]workflow.Trace, error) { return nil, nil }

// planOnly stands for the action-plan mode, which is no StepEditChecker.
type planOnly struct{}

func (planOnly) Step(context.Context, workflow.Run) error { return errors.New("not run") }
func (planOnly) Closing(workflow.Run) workflow.Message    { return workflow.Message{} }

// A fork whose edited selection is workflow.complete with its message
// ends the round with that answer at the fork's step, making no model
// call.
func TestForkEndsWithEditedAnswer(t *testing.T) {
	t.Parallel()
	store := newStore()
	model := scripted.New(tenRecordedSteps()...)
	e := startEngine(t, testConfig("fork"), store, model, enginetest.NewRegistry())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	calls := len(model.Calls())
	fork, err := e.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 4,
		Selection: &workflow.Selection{Action: workflow.CompleteAction, ActionObjective: "answer", ParametersContext: "c",
			ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "message", Type: "string", Required: true}}}},
		Parameters: map[string]any{"message": "stopping here"}})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	fork = wait(t, e, fork.ID)
	msgs := messages(t, store, fork.ID)
	if fork.Status != workflow.StatusCompleted || len(msgs) != 5 || msgs[4].Role != workflow.RoleAssistant || msgs[4].Text != "stopping here" {
		t.Fatalf("fork ended %s with %+v", fork.Status, shapes(msgs))
	}
	if n := len(model.Calls()) - calls; n != 0 {
		t.Errorf("the fork made %d model calls, want none", n)
	}
}

// A round paused for approval forked at its paused step with edited
// parameters: the selection comes from the original's checkpoint (the
// fork's engine sees no trace), the fork's step still needs approval and
// pauses with the edited parameters, and approving it runs them; the
// original stays paused, unchanged.
func TestForkPausedStepKeepsApprovals(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	first, orig, model := pausedAt(t, store, reg, approvalConfig(), enginetest.Completes("forked"))
	// The fork runs on an engine of the same instance id: the first one
	// must be gone, or both would claim the fork's round as one holder (one
	// fence) and run its step twice, as two processes sharing an instance
	// id would.
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, store, orig.ID)
	e := startEngine(t, approvalConfig(), &tracelessStore{Store: store}, model, reg)
	fork, err := e.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 1, Parameters: map[string]any{"text": "edited"}})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	fork = wait(t, e, fork.ID)
	p := fork.PendingApproval
	if fork.Status != workflow.StatusAwaitingApproval || p == nil || p.Action != enginetest.Echo || p.Parameters["text"] != "edited" || p.Step != 1 {
		t.Fatalf("the fork ended %s with pending %+v, want it paused on echo(edited)", fork.Status, p)
	}
	if n := len(reg.Calls()); n != 0 {
		t.Fatalf("the held action ran %d times before any decision", n)
	}
	if _, err := e.Decide(context.Background(), "alice", fork.ID, p.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if fork = wait(t, e, fork.ID); fork.Status != workflow.StatusCompleted {
		t.Fatalf("the approved fork ended %s (%s)", fork.Status, fork.Error)
	}
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "edited" {
		t.Errorf("executed %+v, want echo(edited) once", calls)
	}
	if after := snapshot(t, store, orig.ID); after != before {
		t.Errorf("the original changed:\nbefore %s\nafter  %s", before, after)
	}
}
