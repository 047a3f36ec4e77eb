package memstore

import (
	"encoding/json"

	"github.com/twostep/twostep/workflow"
)

// storeMessages returns the store's own copies of in (deepcopy.go), with
// the workflow id set and no seq, or KindInvalid for a message the Redis
// store could not encode either. A message reads back exactly as it was
// committed, where the Redis store gives its JSON round trip (an empty
// parameter map omitted, so nil; numbers float64): the same JSON, which
// is all the engine relies on (its loop check compares parameters in that
// form, workflow.Fingerprint).
func storeMessages(wfID string, in []workflow.Message) ([]workflow.Message, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]workflow.Message, len(in))
	for i := range in {
		m := &out[i]
		*m = in[i]
		if err := checkMessage(m); err != nil {
			return nil, err
		}
		own(m)
		m.Seq, m.WorkflowID = 0, wfID
		for j := range m.Documents {
			m.Documents[j].WorkflowID = wfID
		}
	}
	return out, nil
}

// checkMessage returns KindInvalid when json.Marshal refuses m: a
// parameter value JSON has no form for (NaN, a channel, ...) or a time
// outside years 0-9999, the only values of a Message it refuses.
func checkMessage(m *workflow.Message) error {
	if y := m.CreatedAt.Year(); y < 0 || y > 9999 {
		return workflow.Errorf(workflow.KindInvalid, "message %s cannot be encoded: its time %v is outside years 0-9999", m.ID, m.CreatedAt)
	}
	if len(m.Parameters) > 0 {
		if _, err := json.Marshal(m.Parameters); err != nil {
			return workflow.WrapKind(workflow.KindInvalid, err, "message %s cannot be encoded", m.ID)
		}
	}
	return nil
}

// copyMessages returns copies of the stored messages, whose seqs are set.
func copyMessages(stored []*workflow.Message) []workflow.Message {
	out := make([]workflow.Message, len(stored))
	for i, m := range stored {
		out[i] = *m
		own(&out[i])
	}
	return out
}
