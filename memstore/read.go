package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// ListWorkflows returns userID's workflows newest first (by descending id,
// which for ids made by workflow.NewID is creation order) and the cursor of
// the next page.
func (s *Store) ListWorkflows(ctx context.Context, userID string, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "memstore.ListWorkflows(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, "", err
	}
	return s.list(p, func(rec *record) bool { return rec.userID == userID })
}

// ListAll returns every user's workflows newest first, in the order and
// with the cursors of ListWorkflows, for administrators.
func (s *Store) ListAll(ctx context.Context, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "memstore.ListAll")
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	return s.list(p, func(*record) bool { return true })
}

// list returns the page p of the workflows keep accepts, by descending id,
// and the cursor of the next page. keep runs under the read lock.
func (s *Store) list(p workflow.Page, keep func(*record) bool) ([]*workflow.Workflow, string, error) {
	after, err := workflow.DecodeCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := p.Size()

	type entry struct {
		id    string
		state *workflow.Workflow
	}
	var all []entry
	s.mu.RLock()
	for id, rec := range s.wfs {
		if (after == "" || id < after) && keep(rec) && !s.expired(rec) {
			all = append(all, entry{id, rec.state})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(b.id, a.id) })

	next := ""
	if len(all) > limit {
		all = all[:limit]
		next = workflow.EncodeCursor(all[limit-1].id)
	}
	out := make([]*workflow.Workflow, 0, len(all))
	for _, e := range all {
		out = append(out, copyOf(e.state))
	}
	return out, next, nil
}

// DeleteWorkflow removes the workflow with its messages, documents, traces
// and lease; KindNotFound when it does not exist.
func (s *Store) DeleteWorkflow(ctx context.Context, id string) (err error) {
	defer workflow.Wrap(&err, "memstore.DeleteWorkflow(%q)", id)
	if err := checkID(ctx, "workflow id", id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live(id)
	if !ok {
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	s.remove(id, rec)
	return nil
}

// Messages returns up to limit messages with seq > afterSeq in seq order
// (limit <= 0: all of them); KindNotFound for an unknown workflow.
func (s *Store) Messages(ctx context.Context, workflowID string, afterSeq int64, limit int) (_ []workflow.Message, err error) {
	defer workflow.Wrap(&err, "memstore.Messages(%q)", workflowID)
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	rec, ok := s.live(workflowID)
	var msgs []*workflow.Message
	if ok {
		msgs = rec.msgs[:len(rec.msgs):len(rec.msgs)]
	}
	s.mu.RUnlock()
	if !ok {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	start := min(max(afterSeq, 0), int64(len(msgs)))
	msgs = msgs[start:]
	if limit > 0 && len(msgs) > limit {
		msgs = msgs[:limit]
	}
	return copyMessages(msgs), nil
}

// DocumentContent returns a copy of a document of the workflow with its
// bytes (never nil: an empty document has zero-length content); KindNotFound
// when the workflow does not own it.
func (s *Store) DocumentContent(ctx context.Context, workflowID, documentID string) (_ workflow.DocumentContent, err error) {
	defer workflow.Wrap(&err, "memstore.DocumentContent(%q, %q)", workflowID, documentID)
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return workflow.DocumentContent{}, err
	}
	if err := checkID(ctx, "document id", documentID); err != nil {
		return workflow.DocumentContent{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.live(workflowID)
	if !ok {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	d, ok := rec.docs[documentID]
	if !ok {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindNotFound, "document %s not found in workflow %s", documentID, workflowID)
	}
	return workflow.DocumentContent{Document: d.meta, Content: copyContent(d.content)}, nil
}
