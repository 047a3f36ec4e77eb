package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// newWorkflow returns a running workflow of user that does not exist yet.
func newWorkflow(user string) *workflow.Workflow {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &workflow.Workflow{
		ID:        workflow.NewID(workflow.PrefixWorkflow),
		UserID:    user,
		Mode:      workflow.ModeReact,
		Status:    workflow.StatusRunning,
		Round:     1,
		MaxSteps:  10,
		CreatedAt: now,
		UpdatedAt: now,
	}
}

// userMessage returns a round-1 user message carrying docs.
func userMessage(text string, docs ...workflow.DocumentContent) workflow.Message {
	m := workflow.Message{
		ID:        workflow.NewID(workflow.PrefixMessage),
		Round:     1,
		Role:      workflow.RoleUser,
		Text:      text,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
	}
	for i := range docs {
		docs[i].MessageID = m.ID
		m.Documents = append(m.Documents, docs[i].Document)
	}
	return m
}

// document returns a document with content, not yet attached to a message.
func document(name string, content []byte) workflow.DocumentContent {
	return workflow.DocumentContent{
		Document: workflow.Document{
			ID:       workflow.NewID(workflow.PrefixDocument),
			Name:     name,
			MimeType: "text/plain",
			Size:     int64(len(content)),
		},
		Content: content,
	}
}

// create stores wf as a new workflow with one user message and one
// document, and returns the stored workflow.
func create(t *testing.T, s workflow.Store, wf *workflow.Workflow) (*workflow.Workflow, workflow.Message, workflow.DocumentContent) {
	t.Helper()
	d := document("notes.txt", []byte("content of "+wf.ID))
	m := userMessage("hello from "+wf.ID, d)
	d.MessageID = m.ID
	got, msgs, err := s.Commit(context.Background(), workflow.Commit{
		Workflow: wf, Messages: []workflow.Message{m}, Documents: []workflow.DocumentContent{d},
	})
	must(t, "Commit(create)", err)
	if len(msgs) != 1 {
		t.Fatalf("Commit(create) returned %d messages, want 1", len(msgs))
	}
	return got, msgs[0], d
}

// step commits one action message on top of wf and returns the new state.
func step(t *testing.T, s workflow.Store, wf *workflow.Workflow, label string) (*workflow.Workflow, workflow.Message) {
	t.Helper()
	next := wf.Clone()
	next.Step++
	m := workflow.Message{
		ID:     workflow.NewID(workflow.PrefixMessage),
		Round:  next.Round,
		Step:   next.Step,
		Role:   workflow.RoleAction,
		Action: "ai.process",
		Status: workflow.MessageSuccess,
		Text:   label,
	}
	got, msgs, err := s.Commit(context.Background(), workflow.Commit{
		Workflow: next, ExpectedVersion: wf.Version, Messages: []workflow.Message{m},
	})
	must(t, fmt.Sprintf("Commit(step %q)", label), err)
	return got, msgs[0]
}
