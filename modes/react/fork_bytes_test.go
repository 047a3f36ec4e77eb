package react_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// countingStore counts the document contents read from it.
type countingStore struct {
	*memstore.Store
	reads atomic.Int32
}

func (s *countingStore) DocumentContent(ctx context.Context, workflowID, documentID string) (workflow.DocumentContent, error) {
	s.reads.Add(1)
	return s.Store.DocumentContent(ctx, workflowID, documentID)
}

// TestForkCopyIsBoundedBeforeAnythingIsRead: a fork whose kept messages
// carry more document bytes than MaxForkBytes is refused, explained,
// from the sizes its messages record — no document is read — and a fork
// of the same workflow from before those documents is made.
func TestForkCopyIsBoundedBeforeAnythingIsRead(t *testing.T) {
	t.Parallel()
	store := &countingStore{Store: newStore()}
	model := scripted.New(tenRecordedSteps()...)
	cfg := testConfig("fork")
	cfg.MaxForkBytes = 4 // the echo documents are 2 bytes each ("s1", "s2", ...)
	e := startEngine(t, cfg, store, model, enginetest.NewRegistry())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	before := store.reads.Load()
	_, err := e.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 5})
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(workflow.PublicMessage(err), "limits.maxForkBytes") {
		t.Fatalf("Fork at step 5 (four documents, 8 bytes) = %v, want KindInvalid naming limits.maxForkBytes", err)
	}
	if n := store.reads.Load() - before; n != 0 {
		t.Errorf("the refused fork read %d documents, want none", n)
	}
	fork, err := e.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 3,
		Selection: &workflow.Selection{Action: workflow.CompleteAction, ActionObjective: "answer", ParametersContext: "c",
			ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "message", Type: "string", Required: true}}}},
		Parameters: map[string]any{"message": "early"}})
	if err != nil {
		t.Fatalf("Fork at step 3 (two documents, 4 bytes): %v", err)
	}
	if n := store.reads.Load() - before; n != 2 {
		t.Errorf("the fork at step 3 read %d documents, want its 2", n)
	}
	wait(t, e, fork.ID)
}

// TestForkAtTheRunningLimitReadsNothing: with the user's running limit
// reached (a second workflow's round blocks in its model call), a fork is
// refused (KindTooMany) before any document is read, not by its commit
// after the copy.
func TestForkAtTheRunningLimitReadsNothing(t *testing.T) {
	t.Parallel()
	store := &countingStore{Store: newStore()}
	replies := tenRecordedSteps()
	model := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n < len(replies) {
			return replies[n], nil
		}
		return "", scripted.ErrBlock // the second workflow's round runs until the test ends
	}}
	cfg := testConfig("fork")
	cfg.MaxRunningPerUser = 1
	e := startEngine(t, cfg, store, model, enginetest.NewRegistry())
	orig := wait(t, e, create(t, e, "ten steps", 10).ID)
	busy := create(t, e, "blocks", 5)
	if busy.Status != workflow.StatusRunning {
		t.Fatalf("second workflow = %s, want running", busy.Status)
	}
	before := store.reads.Load()
	_, err := e.Fork(context.Background(), "alice", orig.ID, engine.ForkRequest{Round: 1, Step: 5})
	if workflow.KindOf(err) != workflow.KindTooMany {
		t.Fatalf("Fork at the running limit = %v, want KindTooMany", err)
	}
	if n := store.reads.Load() - before; n != 0 {
		t.Errorf("the refused fork read %d documents, want none", n)
	}
	if _, err := e.Stop(context.Background(), "alice", busy.ID); err != nil {
		t.Fatal(err)
	}
}
