package memstore

import (
	"encoding/json"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// Messages are kept as records, their JSON encoding (encoding/json, as the
// Redis store keeps them), and decoded on every read, Commit's answer
// included: the engine reads its messages back in the form a JSON round
// trip gives them (an empty parameter map becomes nil, numbers float64,
// invalid UTF-8 replaced), which its loop detection compares with the
// messages a step is about to commit, so a message must read back the
// same from either store. A message JSON cannot encode fails its commit
// with KindInvalid, as on Redis.

// encodeMessages returns the records of the messages, with the workflow
// id set and no seq.
func encodeMessages(wfID string, in []workflow.Message) ([][]byte, error) {
	recs := make([][]byte, len(in))
	for i, m := range in {
		m.Seq, m.WorkflowID = 0, wfID
		if slices.ContainsFunc(m.Documents, func(d workflow.Document) bool { return d.WorkflowID != wfID }) {
			m.Documents = slices.Clone(m.Documents) // the caller's are not changed
			for j := range m.Documents {
				m.Documents[j].WorkflowID = wfID
			}
		}
		rec, err := json.Marshal(&m)
		if err != nil {
			return nil, workflow.WrapKind(workflow.KindInvalid, err, "message %s cannot be encoded", m.ID)
		}
		recs[i] = rec
	}
	return recs, nil
}

// decodeMessages returns the messages of recs, whose seqs run from first
// on. It fails only on a record the store did not write, which would be a
// bug: KindInternal.
func decodeMessages(recs [][]byte, first int64) ([]workflow.Message, error) {
	out := make([]workflow.Message, len(recs))
	for i, rec := range recs {
		if err := json.Unmarshal(rec, &out[i]); err != nil {
			return nil, workflow.WrapKind(workflow.KindInternal, err, "stored message %d cannot be decoded", first+int64(i))
		}
		out[i].Seq = first + int64(i)
	}
	return out, nil
}
