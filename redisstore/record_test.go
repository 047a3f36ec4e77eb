package redisstore

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

// TestRecordsKeepTheirLayoutKey fails when a domain type gains a JSON
// field named "layout", or a MarshalJSON method: the record's own layout
// key would then shadow the field, or be lost.
func TestRecordsKeepTheirLayoutKey(t *testing.T) {
	for name, rec := range map[string]any{
		"state":        stateRecord{layout, &workflow.Workflow{ID: "w"}},
		"message":      messageRecord{layout, &workflow.Message{ID: "m"}},
		"trace":        traceRecord{layout, &workflow.Trace{ID: "t"}},
		"document":     documentRecord{layout, &workflow.Document{ID: "d"}},
		"subscription": subscriptionRecord{layout, &workflow.WebhookSubscription{URL: "u"}},
		"standing":     standingRecord{layout, &workflow.StandingApproval{ID: "s"}},
		"experiment":   experimentRecord{layout, &experiment.Experiment{ID: "e"}},
		"hook":         toHookRecord(workflow.WebhookDelivery{ID: "h"}),
		"idem":         idemAnswer{Layout: layout},
	} {
		b, err := encodeRecord(rec, name, "x")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), `{"layout":1,`) || strings.Count(string(b), `"layout":`) != 1 {
			t.Errorf("%s record = %s: want the layout key once, then the value's fields", name, b)
		}
	}
}

// TestEncodeRefusesWhatJSONCannotHold: a value encoding/json refuses (a
// NaN parameter, a time past year 9999, a raw fragment that is no JSON)
// is KindInvalid from the record codec, never a record Redis would keep.
func TestEncodeRefusesWhatJSONCannotHold(t *testing.T) {
	for name, m := range map[string]*workflow.Message{
		"NaN":      {ID: "m", Parameters: map[string]any{"x": math.NaN()}},
		"year":     {ID: "m", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"not JSON": {ID: "m", Parameters: map[string]any{"x": json.RawMessage(`{"a":`)}},
		"infinity": {ID: "m", Parameters: map[string]any{"x": math.Inf(1)}},
	} {
		b, err := encodeMessage(m)
		if workflow.KindOf(err) != workflow.KindInvalid {
			t.Errorf("%s: encodeMessage = %s, %v; want a KindInvalid error", name, b, err)
		}
	}
}

// TestDecodeRefusesUnknownLayouts: a record of a newer layout (or a
// corrupt one) is KindInternal, not misread; layout 0 (no key) reads.
func TestDecodeRefusesUnknownLayouts(t *testing.T) {
	for _, b := range []string{`{"layout":2,"id":"w"}`, `{"layout":-1,"id":"w"}`, `{"id":`, `{"layout":"1","id":"w"}`} {
		if _, err := decodeState([]byte(b)); workflow.KindOf(err) != workflow.KindInternal {
			t.Errorf("decodeState(%s) error %v, want KindInternal", b, err)
		}
		var m workflow.Message
		if err := decodeMessage([]byte(b), 1, &m); workflow.KindOf(err) != workflow.KindInternal {
			t.Errorf("decodeMessage(%s) error %v, want KindInternal", b, err)
		}
	}
	wf, err := decodeState([]byte(`{"id":"w","userId":"u","version":4}`))
	if err != nil || wf.ID != "w" || wf.UserID != "u" || wf.Version != 4 {
		t.Errorf("decodeState of layout 0 = %+v, %v", wf, err)
	}
}
