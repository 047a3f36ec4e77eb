package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestStartRoundOnBusy: onBusy reaches the engine, a queued round answers
// 202 with the workflow's queue, and an unknown choice is a 422 problem.
func TestStartRoundOnBusy(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	var got engine.NewRound
	env.engine.StartFn = func(userID, id string, in engine.NewRound) (*workflow.Workflow, error) {
		got = in
		w := testWorkflow(userID, workflow.StatusRunning)
		w.QueuedRounds = []workflow.QueuedRound{{MessageID: "msg_1", Prompt: "next\nmore", Interrupt: true, QueuedAt: time.Unix(0, 0).UTC(),
			Documents: []workflow.Document{{ID: "doc_1", Name: "a.txt", MimeType: "text/plain", Size: 3}}}}
		return w, nil
	}
	path := "/api/v1/workflows/" + idemWorkflowID + "/rounds"
	rec := env.do(t, "POST", path+"?onBusy=interrupt", aliceToken, map[string]any{"prompt": "next"})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status = %d, want 202: %s", rec.Code, rec.Body)
	}
	if got.OnBusy != workflow.OnBusyInterrupt {
		t.Errorf("engine got onBusy %q, want interrupt", got.OnBusy)
	}
	var body struct {
		QueuedRounds []apiv1.QueuedRoundView `json:"queuedRounds"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.QueuedRounds) != 1 {
		t.Fatalf("queuedRounds = %+v, want one", body.QueuedRounds)
	}
	q := body.QueuedRounds[0]
	if q.MessageID != "msg_1" || q.Round != 2 || q.Title != "next" || !q.Interrupt || len(q.Documents) != 1 || q.Documents[0].Name != "a.txt" {
		t.Errorf("queued round = %+v", q)
	}
	if rec := env.do(t, "POST", path+"?onBusy=later", aliceToken, map[string]any{"prompt": "next"}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("onBusy=later: %d, want 422", rec.Code)
	}
	if v := viewWorkflow(testWorkflow("alice", workflow.StatusCompleted)); v.QueuedRounds == nil || len(v.QueuedRounds) != 0 {
		t.Errorf("a workflow without queued rounds shows queuedRounds %#v, want []", v.QueuedRounds)
	}
}
