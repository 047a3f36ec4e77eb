package client_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/client"
)

// A fork through the whole stack: the fork at the answering step with
// edited parameters ends with the edited answer, holds the original's
// first step with its document, names its origin, and outlives the
// original's deletion; a refused selection is a 422 at body.selection and
// another user's workflow a 404.
func TestFork(t *testing.T) {
	t.Parallel()
	gw := startGateway(0, nil)
	defer gw.close()
	c, _ := client.New(gw.url, aliceToken)
	bob, _ := client.New(gw.url, bobToken)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note", Wait: 10 * time.Second})
	if err != nil || res.Status != "completed" {
		t.Fatalf("Create = %+v, %v", res, err)
	}
	orig, err := c.Messages(ctx, res.ID, 0)
	if err != nil || len(orig) != 3 {
		t.Fatalf("Messages = %+v, %v", orig, err)
	}

	fork, err := c.Fork(ctx, res.ID, client.ForkRequest{Round: 1, Step: 2, Parameters: map[string]any{"message": "Forked answer."}})
	if err != nil {
		t.Fatal(err)
	}
	if fork.ForkedFrom == nil || *fork.ForkedFrom != (client.ForkOrigin{WorkflowID: res.ID, Round: 1, Step: 2}) {
		t.Fatalf("fork = %+v", fork)
	}
	for ev, err := range c.Events(ctx, fork.ID) { // until the fork's round ends
		if err != nil {
			t.Fatal(err)
		}
		_ = ev
	}
	if _, err := bob.Fork(ctx, res.ID, client.ForkRequest{Round: 1, Step: 2}); !client.IsNotFound(err) {
		t.Errorf("bob's Fork = %v, want a 404", err)
	}
	_, err = c.Fork(ctx, res.ID, client.ForkRequest{Round: 1, Step: 2, Selection: &client.ForkSelection{
		Action: "document.extract", RequiredInputDocuments: []string{"docItem:doc_nothere:x.txt"}}})
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 422 || len(p.Errors) == 0 || p.Errors[0].Location != "body.selection" {
		t.Errorf("refused selection = %v, want a 422 at body.selection", err)
	}

	if err := c.Delete(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Messages(ctx, fork.ID, 0)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("the fork's messages = %+v, %v", msgs, err)
	}
	if diff := cmp.Diff(orig[:2], msgs[:2]); diff != "" {
		t.Errorf("the fork's first messages (-original +fork):\n%s", diff)
	}
	if msgs[2].Role != "assistant" || msgs[2].Text != "Forked answer." {
		t.Errorf("the fork's answer = %+v", msgs[2])
	}
	body, _, err := c.Document(ctx, fork.ID, msgs[1].Documents[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if string(data) != "# Note" {
		t.Errorf("the fork's document = %q after the original's deletion", data)
	}
	if got, err := c.Get(ctx, fork.ID); err != nil || got.Status != "completed" {
		t.Errorf("the fork = %+v, %v", got, err)
	}
}
