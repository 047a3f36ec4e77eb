package adminv1_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twostep/twostep/adminv1"
)

// An experiment as the gateway sends it decodes into Experiment and
// encodes back to the same JSON: the wire type keeps every field.
func TestExperimentRoundTrip(t *testing.T) {
	t.Parallel()
	const body = `{"id":"ex_1","status":"completed","stage":"stage1",` +
		`"spec":{"stage":"stage1","workflows":["wf_1"],"since":"2025-03-04T05:06:07Z","action":"a.b",` +
		`"templates":{"stage1":"{{.X}}"},"model":{"provider":"openai","model":"m"}},` +
		`"calls":[{"traceId":"tr_1","workflowId":"wf_1","round":1,"step":2,"recorded":{"action":"a.b"},"result":{"action":"a.c"},` +
		`"error":"cut","agreement":{"action":false,"references":true,"fields":true,"parameters":{"k":true},"all":false},` +
		`"model":"m","tokens":7,"usd":0.5}],` +
		`"totals":{"calls":1,"agreed":0,"tokens":7,"usd":0.5},"error":"boom",` +
		`"createdAt":"2025-03-04T05:06:07Z","updatedAt":"2025-03-04T05:06:08Z"}`
	var e adminv1.Experiment
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != "ex_1" || e.Spec.Model == nil || e.Spec.Model.Provider != "openai" || len(e.Calls) != 1 ||
		e.Calls[0].Agreement.Action == nil || *e.Calls[0].Agreement.Action || e.Totals.USD == nil || *e.Totals.USD != 0.5 {
		t.Errorf("decoded %+v", e)
	}
	again, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if w, g := compact(t, []byte(body)), compact(t, again); w != g {
		t.Errorf("encoded back:\n%s\nwant\n%s", g, w)
	}
}

// compact is data's JSON with its objects' keys sorted.
func compact(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
