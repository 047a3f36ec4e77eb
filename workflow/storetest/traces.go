package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// testLargeDocument round-trips a 5 MiB binary document byte for byte.
func testLargeDocument(t *testing.T, f Fixture) {
	ctx := context.Background()
	content := make([]byte, 5<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range content {
		content[i] = byte(rng.UintN(256))
	}
	wf := newWorkflow("alice")
	d := document("big.bin", content)
	d.MimeType = "application/octet-stream"
	m := userMessage("big upload", d)
	_, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{m}, Documents: []workflow.DocumentContent{d}})
	must(t, "Commit", err)
	got, err := f.Store.DocumentContent(ctx, wf.ID, d.ID)
	must(t, "DocumentContent", err)
	if !bytes.Equal(got.Content, content) {
		t.Errorf("5 MiB document differs after the round trip (got %d bytes)", len(got.Content))
	}
	if got.Size != int64(len(content)) || got.MimeType != d.MimeType || got.Name != "big.bin" {
		t.Errorf("metadata = %+v, want size %d, %s, big.bin", got.Document, len(content), d.MimeType)
	}
}

func newTrace(wfID string, n int) workflow.Trace {
	var ungrounded []string // none on the first, as on most traces
	if n > 0 {
		ungrounded = []string{"ticketId", fmt.Sprintf("lines[%d].sku", n)}
	}
	return workflow.Trace{
		ID:               workflow.NewID(workflow.PrefixTrace),
		WorkflowID:       wfID,
		Round:            1,
		Step:             n,
		Stage:            workflow.StageTwo,
		Attempt:          1,
		Template:         "stage2",
		Prompt:           []workflow.PromptMessage{{Role: "system", Content: "you fill parameters"}, {Role: "user", Content: fmt.Sprintf("step %d", n)}},
		Response:         `{"schema":"parameters_v1"}`,
		Parsed:           json.RawMessage(`{"n":` + fmt.Sprint(n) + `}`),
		Error:            "",
		Model:            "scripted",
		PromptTokens:     10 + n,
		CompletionTokens: 3,
		CachedTokens:     n * 128,
		CacheWriteTokens: n,
		LatencyMs:        int64(n),
		Ungrounded:       ungrounded,
		CreatedAt:        time.Now().UTC().Truncate(time.Millisecond),
	}
}

func testTraces(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	var want []workflow.Trace
	for i := range 3 {
		tr := newTrace(wf.ID, i)
		must(t, "AppendTrace", f.Store.AppendTrace(ctx, tr))
		want = append(want, tr)
	}
	got, err := f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Traces (-want +got):\n%s", diff)
	}
	one, err := f.Store.GetTrace(ctx, want[1].ID)
	must(t, "GetTrace", err)
	if diff := cmp.Diff(want[1], one); diff != "" {
		t.Errorf("GetTrace (-want +got):\n%s", diff)
	}
	err = f.Store.AppendTrace(ctx, want[0])
	wantKind(t, "AppendTrace of an existing id", err, workflow.KindConflict)
	again, err := f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if len(again) != 3 {
		t.Errorf("after a duplicate append: %d traces, want 3", len(again))
	}
}

// testTraceCap appends more traces than the cap: the newest TraceCap stay,
// the dropped ones are gone from GetTrace too.
func testTraceCap(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	extra := 3
	var ids []string
	for i := range f.TraceCap + extra {
		tr := newTrace(wf.ID, i)
		must(t, "AppendTrace", f.Store.AppendTrace(ctx, tr))
		ids = append(ids, tr.ID)
	}
	got, err := f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if len(got) != f.TraceCap {
		t.Fatalf("kept %d traces, want the cap %d", len(got), f.TraceCap)
	}
	for i, tr := range got {
		if want := ids[extra+i]; tr.ID != want {
			t.Fatalf("kept trace %d = %s, want %s (newest %d, oldest first)", i, tr.ID, want, f.TraceCap)
		}
	}
	_, err = f.Store.GetTrace(ctx, ids[0])
	wantKind(t, "GetTrace of a dropped trace", err, workflow.KindNotFound)
	_, err = f.Store.GetTrace(ctx, ids[len(ids)-1])
	must(t, "GetTrace of the newest trace", err)
}
