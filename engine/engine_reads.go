package engine

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// Reader serves the reads of stored workflows (the workflow, its messages
// and documents, a user's listing) scoped to one user: another user's
// workflow answers exactly like an unknown or malformed id, NoWorkflow, so
// no answer tells them apart. Admin returns the reads of every user's
// workflows. Ownership is checked in one place, Reader.workflow, for both.
//
// *Engine serves the same reads over its store; NewReader serves them over
// any Store (for tools and tests that run no engine). A Reader never
// writes and is safe for concurrent use.
type Reader struct {
	store workflow.Store
}

// NewReader returns the reads of store.
func NewReader(store workflow.Store) *Reader { return &Reader{store: store} }

// scope is whose workflows a read may see: userID's, or every user's for
// an admin.
type scope struct {
	userID string
	admin  bool
}

// workflow reads the workflow id as sc may see it. A malformed id, and for
// a user an unknown id or another user's workflow, answer NoWorkflow(id);
// an admin sees any stored workflow, and the store's error for an unknown
// one.
func (r *Reader) workflow(ctx context.Context, sc scope, id string) (*workflow.Workflow, error) {
	if !workflow.ValidID(workflow.PrefixWorkflow, id) {
		return nil, workflow.NoWorkflow(id)
	}
	wf, err := r.store.GetWorkflow(ctx, id)
	if sc.admin {
		return wf, err
	}
	if workflow.KindOf(err) == workflow.KindNotFound || (err == nil && !wf.OwnedBy(sc.userID)) {
		return nil, workflow.NoWorkflow(id)
	}
	if err != nil {
		return nil, err
	}
	return wf, nil
}

// Get returns userID's workflow id.
func (r *Reader) Get(ctx context.Context, userID, id string) (*workflow.Workflow, error) {
	return r.workflow(ctx, scope{userID: userID}, id)
}

// List returns a page of userID's workflows, newest first, and the cursor
// of the next page ("" on the last page); a cursor the store did not
// return is KindInvalid. No other user's workflow is ever listed.
func (r *Reader) List(ctx context.Context, userID string, p workflow.Page) (_ []*workflow.Workflow, next string, err error) {
	defer workflow.Wrap(&err, "List")
	ws, next, err := r.store.ListWorkflows(ctx, userID, p)
	if err != nil {
		return nil, "", err
	}
	owned := ws[:0]
	for _, w := range ws {
		if w.OwnedBy(userID) {
			owned = append(owned, w)
		}
	}
	return owned, next, nil
}

// Messages returns userID's workflow id and up to limit of its messages
// with seq > after, in seq order (limit <= 0: all). The workflow is read
// first, so every message committed with the returned state is among the
// messages (within limit): a reader that sees a terminal status has seen
// the round's last message.
func (r *Reader) Messages(ctx context.Context, userID, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error) {
	return r.messages(ctx, scope{userID: userID}, id, after, limit)
}

// MessagesOf returns up to limit of the messages of wf, a workflow the
// caller already holds (one the engine returned, or a read's), with seq >
// after, in seq order, when wf is userID's; any other answers
// NoWorkflow, as Messages does. It reads only the messages: for a
// caller that has the workflow in hand, one store read instead of two.
// Every message committed with wf's state is among them (within limit).
func (r *Reader) MessagesOf(ctx context.Context, userID string, wf *workflow.Workflow, after int64, limit int) (_ []workflow.Message, err error) {
	if wf == nil || !workflow.ValidID(workflow.PrefixWorkflow, wf.ID) {
		return nil, workflow.NoWorkflow("")
	}
	if !wf.OwnedBy(userID) {
		return nil, workflow.NoWorkflow(wf.ID)
	}
	defer workflow.Wrap(&err, "Messages(%q)", wf.ID)
	msgs, err := r.store.Messages(ctx, wf.ID, after, limit)
	if workflow.KindOf(err) == workflow.KindNotFound {
		return nil, workflow.NoWorkflow(wf.ID)
	}
	return msgs, err
}

// Document returns a document of userID's workflow wfID with its bytes; a
// malformed or unknown document id answers KindNotFound.
func (r *Reader) Document(ctx context.Context, userID, wfID, docID string) (workflow.DocumentContent, error) {
	if _, err := r.workflow(ctx, scope{userID: userID}, wfID); err != nil {
		return workflow.DocumentContent{}, err
	}
	return r.document(ctx, wfID, docID)
}

// Admin returns the reads of every user's workflows, for administrators.
func (r *Reader) Admin() *AdminReader { return &AdminReader{r: r} }

func (r *Reader) messages(ctx context.Context, sc scope, id string, after int64, limit int) (_ *workflow.Workflow, _ []workflow.Message, err error) {
	wf, err := r.workflow(ctx, sc, id)
	if err != nil {
		return nil, nil, err
	}
	defer workflow.Wrap(&err, "Messages(%q)", id)
	msgs, err := r.store.Messages(ctx, id, after, limit)
	if err != nil {
		return nil, nil, err
	}
	return wf, msgs, nil
}

func (r *Reader) document(ctx context.Context, wfID, docID string) (_ workflow.DocumentContent, err error) {
	if !workflow.ValidID(workflow.PrefixDocument, docID) {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindNotFound, "document %q not found", docID)
	}
	defer workflow.Wrap(&err, "Document(%q)", docID)
	return r.store.DocumentContent(ctx, wfID, docID)
}

// AdminReader serves the reads of every user's workflows, for
// administrators (DESIGN §6: an admin may read any user's workflow). A
// malformed id answers like an unknown one; an unknown one answers the
// store's KindNotFound. It never writes.
type AdminReader struct {
	r *Reader
}

// Get returns any user's workflow id.
func (a *AdminReader) Get(ctx context.Context, id string) (*workflow.Workflow, error) {
	return a.r.workflow(ctx, scope{admin: true}, id)
}

// List returns a page of userID's workflows, or of every user's when
// userID is "", newest first, with the cursor of the next page ("" on the
// last page); a cursor the store did not return is KindInvalid.
func (a *AdminReader) List(ctx context.Context, userID string, p workflow.Page) (_ []*workflow.Workflow, next string, err error) {
	defer workflow.Wrap(&err, "List")
	if userID != "" {
		return a.r.store.ListWorkflows(ctx, userID, p)
	}
	return a.r.store.ListAll(ctx, p)
}

// Messages returns any user's workflow id and up to limit of its messages
// with seq > after, read in the order Reader.Messages reads them.
func (a *AdminReader) Messages(ctx context.Context, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error) {
	return a.r.messages(ctx, scope{admin: true}, id, after, limit)
}

// Document returns a document of any user's workflow wfID with its bytes.
func (a *AdminReader) Document(ctx context.Context, wfID, docID string) (workflow.DocumentContent, error) {
	return a.r.document(ctx, wfID, docID)
}

// Traces returns the kept traces of any user's workflow id, oldest first.
func (a *AdminReader) Traces(ctx context.Context, id string) (_ []workflow.Trace, err error) {
	if _, err := a.r.workflow(ctx, scope{admin: true}, id); err != nil {
		return nil, err
	}
	defer workflow.Wrap(&err, "Traces(%q)", id)
	return a.r.store.Traces(ctx, id)
}

// Trace returns one trace by id; a malformed id answers like an unknown
// one.
func (a *AdminReader) Trace(ctx context.Context, traceID string) (_ workflow.Trace, err error) {
	if !workflow.ValidID(workflow.PrefixTrace, traceID) {
		return workflow.Trace{}, workflow.Errorf(workflow.KindNotFound, "trace %q not found", traceID)
	}
	defer workflow.Wrap(&err, "Trace(%q)", traceID)
	return a.r.store.GetTrace(ctx, traceID)
}

// reader is the engine's reads, over the store it commits to.
func (e *Engine) reader() *Reader { return &Reader{store: e.store} }

// Get returns userID's workflow; another user's answers KindNotFound
// (Reader.Get).
func (e *Engine) Get(ctx context.Context, userID, id string) (*workflow.Workflow, error) {
	return e.reader().Get(ctx, userID, id)
}

// List returns a page of userID's workflows, newest first (Reader.List).
func (e *Engine) List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error) {
	return e.reader().List(ctx, userID, p)
}

// Messages returns userID's workflow and its messages after a seq
// (Reader.Messages).
func (e *Engine) Messages(ctx context.Context, userID, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error) {
	return e.reader().Messages(ctx, userID, id, after, limit)
}

// MessagesOf returns the messages of wf, a workflow the caller holds, when
// it is userID's (Reader.MessagesOf).
func (e *Engine) MessagesOf(ctx context.Context, userID string, wf *workflow.Workflow, after int64, limit int) ([]workflow.Message, error) {
	return e.reader().MessagesOf(ctx, userID, wf, after, limit)
}

// Document returns a document of userID's workflow (Reader.Document).
func (e *Engine) Document(ctx context.Context, userID, wfID, docID string) (workflow.DocumentContent, error) {
	return e.reader().Document(ctx, userID, wfID, docID)
}

// Admin returns the reads of every user's workflows, for administrators
// (Reader.Admin).
func (e *Engine) Admin() *AdminReader { return e.reader().Admin() }
