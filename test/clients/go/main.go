// Command clients runs the Go client oapi-codegen generates from the
// gateway's OpenAPI document (gen/, written by TestGeneratedClients in a
// copy of this module) against a running gateway: create a workflow with
// a document, wait for its round, read its messages, download a document
// and decode a 404 problem. It prints "ok" and exits 0, or says what went
// wrong and exits 1.
//
// It compiles only if the document gives always-sent arrays and fields
// plain Go types (no pointers) and one named type for a workflow's status,
// wherever the status appears.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"twostep.test/clients/gen"
)

func main() {
	if err := run(os.Getenv("GATEWAY_URL"), os.Getenv("GATEWAY_TOKEN")); err != nil {
		fmt.Fprintln(os.Stderr, "go client:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

const noteText = "Quarterly numbers: 42"

func run(base, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := gen.NewClientWithResponses(base, gen.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		return err
	}

	docs := []gen.DocumentInput{{Name: "notes.txt", Content: base64.StdEncoding.EncodeToString([]byte(noteText))}}
	created, err := c.CreateWorkflowWithResponse(ctx, &gen.CreateWorkflowParams{}, gen.CreateWorkflowJSONRequestBody{
		Prompt: "Summarise the notes", Documents: &docs,
	})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if created.JSON201 == nil {
		return fmt.Errorf("create: status %d: %s", created.StatusCode(), created.Body)
	}
	id := created.JSON201.Id
	if loc, want := created.HTTPResponse.Header.Get("Location"), "/api/v1/workflows/"+id; loc != want {
		return fmt.Errorf("create: Location %q, want %q", loc, want)
	}

	// One status type: the create answer's, the workflow's and the admin
	// view's status are all gen.WorkflowStatus.
	var status gen.WorkflowStatus = created.JSON201.Status
	for status == gen.WorkflowStatusRunning {
		time.Sleep(50 * time.Millisecond)
		got, err := c.GetWorkflowWithResponse(ctx, id)
		if err != nil || got.JSON200 == nil {
			return fmt.Errorf("get: %v", errors.Join(err, errorf(got.StatusCode(), got.Body)))
		}
		status = got.JSON200.Status
	}
	if status != gen.WorkflowStatusCompleted {
		return fmt.Errorf("workflow ended %s, want completed", status)
	}
	var _ func(gen.AdminWorkflowView) gen.WorkflowStatus = func(v gen.AdminWorkflowView) gen.WorkflowStatus { return v.Status }

	list, err := c.ListMessagesWithResponse(ctx, id, &gen.ListMessagesParams{})
	if err != nil || list.JSON200 == nil {
		return fmt.Errorf("messages: %v", errors.Join(err, errorf(list.StatusCode(), list.Body)))
	}
	// Always-sent arrays are plain slices, never pointers.
	var msgs []gen.MessageView = list.JSON200.Messages
	var docID string
	for _, m := range msgs {
		var learnings []string = m.Learnings
		_ = learnings
		var ds []gen.DocumentView = m.Documents
		if m.Role == gen.MessageViewRoleUser && len(ds) > 0 {
			docID = ds[0].Id
		}
	}
	if docID == "" {
		return fmt.Errorf("no user message with a document among %d messages", len(msgs))
	}

	dl, err := c.GetDocumentWithResponse(ctx, id, docID)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if dl.StatusCode() != http.StatusOK || string(dl.Body) != noteText {
		return fmt.Errorf("download: status %d, body %q, want %q", dl.StatusCode(), dl.Body, noteText)
	}

	missing, err := c.GetWorkflowWithResponse(ctx, "wf_00000000000000000000000000")
	if err != nil {
		return fmt.Errorf("get missing: %w", err)
	}
	p := missing.ApplicationproblemJSON404
	if p == nil {
		return fmt.Errorf("get missing: status %d, no decoded problem: %s", missing.StatusCode(), missing.Body)
	}
	// Always-sent problem fields are plain values.
	var title, detail, typ string = p.Title, p.Detail, p.Type
	var code int64 = p.Status
	if code != http.StatusNotFound || title == "" || detail == "" || typ == "" {
		return fmt.Errorf("get missing: problem %+v", *p)
	}
	return nil
}

func errorf(status int, body []byte) error {
	return fmt.Errorf("status %d: %s", status, body)
}
