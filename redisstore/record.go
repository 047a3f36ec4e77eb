package redisstore

import (
	"time"

	"github.com/bytedance/sonic"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

// The records: the form in which the store keeps each value in Redis,
// encoded by one codec, recordJSON: sonic (github.com/bytedance/sonic)
// with encoding/json's rules (tags, Marshaler, escaping, sorted map keys,
// errors) and a codec compiled per type; on a platform or Go release
// sonic does not compile for, it is encoding/json itself. It encodes a
// commit's records in about two thirds of encoding/json's CPU and decodes
// them in about half (bench/README.md, "Last figures").
//
//	record        where                                  holds
//	state         the json field of a workflow's :state  the workflow
//	message       each element of :msgs                  a message (its seq is its index+1)
//	trace         each value of :tracedata               a trace
//	document      each value of :docmeta                 a document's metadata (the bytes are in :docs)
//	subscription  a workflow's :webhook                  its webhook subscription
//	hook          each value of the user's :hooks        a webhook delivery
//	standing      each value of the user's :standing     a standing approval (its uses are counted apart)
//	idem          an :idem: key holding an answer        "a", then the kept answer to an Idempotency-Key
//	experiment    an experiment's :exp                   the experiment
//
// A record is its value's JSON with one more key, "layout": the layout
// the record was written with. Most records embed their domain type, so
// its json tags decide the fields and a field added to it is stored and
// read back with no change here; hook and idem records name their fields
// themselves. A reader ignores keys it does not know, so records stay
// readable both ways while gateways of two releases share a store.
// layout changes only when a record's shape changes in a way an older
// reader would misread; the reader then migrates the older layouts it
// finds, and refuses a layout newer than its own (KindInternal) rather
// than guess.
//
// Layout 0 is the form stored before records had a layout: the same JSON
// without the key (testdata/layout0.json). TestStoredLayoutsRead reads
// the stored fixture of every layout back.
const layout = 1

// recordJSON is the records' codec: sonic's ConfigStd (encoding/json's
// rules) except that what a MarshalJSON method or a json.RawMessage
// returns is checked to be JSON and kept as it is, not compacted: the
// domain's methods return encoding/json's compact output already, and
// compacting it again was a quarter of the encoding's CPU. A record with
// spaces inside a raw fragment reads back the same.
var recordJSON = sonic.Config{EscapeHTML: true, SortMapKeys: true, CopyString: true, ValidateString: true}.Froze()

// stateRecord is a workflow's state.
type stateRecord struct {
	Layout int `json:"layout"`
	*workflow.Workflow
}

// messageRecord is a message.
type messageRecord struct {
	Layout int `json:"layout"`
	*workflow.Message
}

// traceRecord is a trace.
type traceRecord struct {
	Layout int `json:"layout"`
	*workflow.Trace
}

// documentRecord is a document's metadata.
type documentRecord struct {
	Layout int `json:"layout"`
	*workflow.Document
}

// subscriptionRecord is a workflow's webhook subscription.
type subscriptionRecord struct {
	Layout int `json:"layout"`
	*workflow.WebhookSubscription
}

// standingRecord is a standing approval.
type standingRecord struct {
	Layout int `json:"layout"`
	*workflow.StandingApproval
}

// experimentRecord is an experiment.
type experimentRecord struct {
	Layout int `json:"layout"`
	*experiment.Experiment
}

// hookRecord is a webhook delivery (a value of the user's :hooks hash).
type hookRecord struct {
	Layout      int             `json:"layout"`
	ID          string          `json:"id"`
	WorkflowID  string          `json:"workflowId"`
	UserID      string          `json:"userId"`
	Event       string          `json:"event"`
	URL         string          `json:"url"`
	Secret      string          `json:"secret,omitempty"` // dropped once finished
	Body        []byte          `json:"body"`
	CreatedAt   time.Time       `json:"createdAt"`
	Status      string          `json:"status"`
	NextAttempt time.Time       `json:"nextAttempt,omitzero"`
	Attempts    []attemptRecord `json:"attempts,omitempty"`
}

// attemptRecord is one attempt of a delivery.
type attemptRecord struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"statusCode,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// toHookRecord returns d's record.
func toHookRecord(d workflow.WebhookDelivery) hookRecord {
	r := hookRecord{Layout: layout, ID: d.ID, WorkflowID: d.WorkflowID, UserID: d.UserID, Event: d.Event, URL: d.URL, Secret: d.Secret,
		Body: d.Body, CreatedAt: d.CreatedAt, Status: string(d.Status), NextAttempt: d.NextAttempt}
	for _, a := range d.Attempts {
		r.Attempts = append(r.Attempts, attemptRecord(a))
	}
	return r
}

// delivery returns the delivery r records.
func (r hookRecord) delivery() workflow.WebhookDelivery {
	d := workflow.WebhookDelivery{ID: r.ID, WorkflowID: r.WorkflowID, UserID: r.UserID, Event: r.Event, URL: r.URL,
		Secret: r.Secret, Body: r.Body, CreatedAt: r.CreatedAt, Status: workflow.DeliveryStatus(r.Status), NextAttempt: r.NextAttempt}
	for _, a := range r.Attempts {
		d.Attempts = append(d.Attempts, workflow.WebhookAttempt(a))
	}
	return d
}

// idemAnswer is a kept answer to an Idempotency-Key (after the "a" of
// its :idem: value).
type idemAnswer struct {
	Layout int                 `json:"layout"`
	Hash   string              `json:"hash"`
	Status int                 `json:"status"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body"`
}

// encodeState returns wf's state record.
func encodeState(wf *workflow.Workflow) ([]byte, error) {
	return encodeRecord(stateRecord{layout, wf}, "workflow", wf.ID)
}

// encodeMessage returns m's record.
func encodeMessage(m *workflow.Message) ([]byte, error) {
	return encodeRecord(messageRecord{layout, m}, "message", m.ID)
}

// encodeTrace returns t's record.
func encodeTrace(t *workflow.Trace) ([]byte, error) {
	return encodeRecord(traceRecord{layout, t}, "trace", t.ID)
}

// encodeDocument returns d's metadata record.
func encodeDocument(d *workflow.Document) ([]byte, error) {
	return encodeRecord(documentRecord{layout, d}, "document", d.ID)
}

// encodeRecord encodes rec, a record of the value what id: KindInvalid
// when encoding/json refuses it (a NaN parameter, a year past 9999).
func encodeRecord(rec any, what, id string) ([]byte, error) {
	b, err := recordJSON.Marshal(rec)
	if err != nil {
		return nil, workflow.WrapKind(workflow.KindInvalid, err, "%s %s cannot be encoded", what, id)
	}
	return b, nil
}

// decodeState decodes a state record.
func decodeState(b []byte) (*workflow.Workflow, error) {
	rec := stateRecord{Workflow: new(workflow.Workflow)}
	if err := decodeRecord(b, &rec, &rec.Layout, "workflow"); err != nil {
		return nil, err
	}
	return rec.Workflow, nil
}

// decodeMessage decodes the message record b, whose seq is seq, into m.
func decodeMessage(b []byte, seq int64, m *workflow.Message) error {
	rec := messageRecord{Message: m}
	if err := decodeRecord(b, &rec, &rec.Layout, "message"); err != nil {
		return err
	}
	m.Seq = seq
	return nil
}

// decodeTrace decodes the trace record b into t.
func decodeTrace(b []byte, t *workflow.Trace) error {
	rec := traceRecord{Trace: t}
	return decodeRecord(b, &rec, &rec.Layout, "trace")
}

// decodeDocument decodes the document record b into d.
func decodeDocument(b []byte, d *workflow.Document) error {
	rec := documentRecord{Document: d}
	return decodeRecord(b, &rec, &rec.Layout, "document metadata")
}

// decodeRecord decodes b into rec, whose layout field is at: KindInternal
// when b is not a record of a layout this store reads. Every layout so
// far (0 and 1) decodes as it is.
func decodeRecord(b []byte, rec any, at *int, what string) error {
	if err := recordJSON.Unmarshal(b, rec); err != nil {
		return workflow.WrapKind(workflow.KindInternal, err, "stored %s is corrupt", what)
	}
	if *at < 0 || *at > layout {
		return workflow.Errorf(workflow.KindInternal, "stored %s has layout %d; this store reads layouts 0 to %d", what, *at, layout)
	}
	return nil
}
