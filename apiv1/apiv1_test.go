package apiv1_test

import (
	"encoding/json"
	"testing"

	"github.com/twostep/twostep/apiv1"
)

// A waited answer is the workflow's fields and the round's messages side
// by side, and it encodes back to the same JSON: the wire types keep every
// field the server sends.
func TestWorkflowResultIsFlat(t *testing.T) {
	t.Parallel()
	const body = `{"id":"wf_1","userId":"alice","mode":"react","status":"completed","stopReason":"completed",` +
		`"round":1,"step":2,"maxSteps":10,"title":"Sum it up","error":"",` +
		`"stats":{"llmCalls":3,"promptTokens":10,"completionTokens":5,"actions":1,"byStage":{"stage1":{"calls":2,"promptTokens":8,"completionTokens":4,"cachedTokens":0}}},` +
		`"createdAt":"2025-03-04T05:06:07Z","updatedAt":"2025-03-04T05:06:08Z",` +
		`"forkedFrom":{"workflowId":"wf_0","round":1,"step":2},"queuedRounds":[],` +
		`"messages":[{"id":"msg_1","seq":1,"round":1,"step":0,"role":"user","text":"Sum it up","action":"","actionObjective":"",` +
		`"parameters":null,"status":"","documentsLabel":"round1_user_context","documents":[{"id":"doc_1","name":"a.txt","mimeType":"text/plain","size":3}],` +
		`"summary":"","findings":"","learnings":[],"createdAt":"2025-03-04T05:06:07Z"}],"webhookSecret":"whsec_x"}`
	var r apiv1.WorkflowResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "wf_1" || r.Running() || len(r.Messages) != 1 || r.Messages[0].Documents[0].Size != 3 ||
		r.Stats.ByStage["stage1"].Calls != 2 || r.ForkedFrom == nil || r.WebhookSecret != "whsec_x" {
		t.Errorf("decoded %+v", r)
	}
	again, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if w, g := mustJSON(t, want), mustJSON(t, got); w != g {
		t.Errorf("encoded back:\n%s\nwant\n%s", g, w)
	}
}

// A webhook delivery's body, as the gateway writes it, decodes with the
// workflow inside data.
func TestWebhookEvent(t *testing.T) {
	t.Parallel()
	var ev apiv1.WebhookEvent
	body := `{"type":"round.completed","timestamp":"2025-03-04T05:06:07Z","data":{"workflow":{"id":"wf_1","status":"completed"}}}`
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "round.completed" || ev.Data.Workflow.ID != "wf_1" || ev.Data.Workflow.Status != "completed" || ev.Timestamp.IsZero() {
		t.Errorf("decoded %+v", ev)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v) // maps encode with sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
