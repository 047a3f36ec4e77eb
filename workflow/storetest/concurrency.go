package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// testConcurrentSameVersion races 50 committers that all read version 1:
// exactly one wins, every other one gets KindConflict, and nothing of the
// losers (state, message, document) is visible.
func testConcurrentSameVersion(t *testing.T, f Fixture) {
	const racers = 50
	ctx := context.Background()
	base, _, _ := create(t, f.Store, newWorkflow("alice"))

	type attempt struct {
		msg workflow.Message
		doc workflow.DocumentContent
		err error
	}
	attempts := make([]attempt, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range attempts {
		d := document(fmt.Sprintf("racer%d.txt", i), []byte(fmt.Sprintf("racer %d", i)))
		attempts[i].doc = d
		attempts[i].msg = userMessage(fmt.Sprintf("racer %d", i), d)
		next := base.Clone()
		next.Step = i + 1
		wg.Go(func() {
			<-start
			_, _, attempts[i].err = f.Store.Commit(ctx, workflow.Commit{
				Workflow: next, ExpectedVersion: base.Version,
				Messages: []workflow.Message{attempts[i].msg}, Documents: []workflow.DocumentContent{d},
			})
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, a := range attempts {
		switch kind := workflow.KindOf(a.err); kind {
		case "":
			if winner >= 0 {
				t.Fatalf("racers %d and %d both committed version %d", winner, i, base.Version)
			}
			winner = i
		case workflow.KindConflict:
		default:
			t.Errorf("racer %d: error kind %q (%v), want conflict", i, kind, a.err)
		}
	}
	if winner < 0 {
		t.Fatal("no racer committed")
	}
	got, err := f.Store.GetWorkflow(ctx, base.ID)
	must(t, "GetWorkflow", err)
	if got.Version != 2 || got.Step != winner+1 {
		t.Errorf("after the race: version %d step %d, want 2 %d (the winner's)", got.Version, got.Step, winner+1)
	}
	msgs, err := f.Store.Messages(ctx, base.ID, 1, 0)
	must(t, "Messages", err)
	if len(msgs) != 1 || msgs[0].ID != attempts[winner].msg.ID || msgs[0].Seq != 2 {
		t.Errorf("after the race: messages %+v, want only the winner's with seq 2", msgs)
	}
	for i, a := range attempts {
		_, err := f.Store.DocumentContent(ctx, base.ID, a.doc.ID)
		if i == winner {
			must(t, "winner's document", err)
			continue
		}
		wantKind(t, fmt.Sprintf("racer %d's document", i), err, workflow.KindNotFound)
	}
}

// testConcurrentSeqs runs committers that retry on conflict until each has
// appended its messages: seqs end up unique and gap-free, and every message
// is stored exactly once.
func testConcurrentSeqs(t *testing.T, f Fixture) {
	const (
		writers = 8
		commits = 5
	)
	ctx := context.Background()
	base, first, _ := create(t, f.Store, newWorkflow("alice"))

	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for c := range commits {
				msgs := []workflow.Message{userMessage(fmt.Sprintf("w%d c%d a", w, c))}
				if c%2 == 1 {
					msgs = append(msgs, userMessage(fmt.Sprintf("w%d c%d b", w, c)))
				}
				if errs[w] = commitRetrying(ctx, f.Store, base.ID, msgs); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		must(t, fmt.Sprintf("writer %d", w), err)
	}

	all, err := f.Store.Messages(ctx, base.ID, 0, 0)
	must(t, "Messages", err)
	perWriter := commits + commits/2
	if want := 1 + writers*perWriter; len(all) != want {
		t.Fatalf("stored %d messages, want %d", len(all), want)
	}
	seen := make(map[string]bool)
	for i, m := range all {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d: seqs have a gap or a duplicate", i, m.Seq)
		}
		if seen[m.Text] {
			t.Errorf("message %q stored twice", m.Text)
		}
		seen[m.Text] = true
	}
	if all[0].ID != first.ID {
		t.Errorf("seq 1 is %s, want the first message %s", all[0].ID, first.ID)
	}
	got, err := f.Store.GetWorkflow(ctx, base.ID)
	must(t, "GetWorkflow", err)
	if want := int64(1 + writers*commits); got.Version != want {
		t.Errorf("version = %d, want %d (one per commit)", got.Version, want)
	}
}

// commitRetrying appends msgs to the workflow, re-reading it after each
// conflict, as the engine does.
func commitRetrying(ctx context.Context, s workflow.Store, id string, msgs []workflow.Message) error {
	for range 10000 {
		cur, err := s.GetWorkflow(ctx, id)
		if err != nil {
			return err
		}
		next := cur.Clone()
		next.Step++
		_, _, err = s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: cur.Version, Messages: msgs})
		if workflow.KindOf(err) != workflow.KindConflict {
			return err
		}
	}
	return fmt.Errorf("commit to %s still conflicts after 10000 attempts", id)
}
