package httpapi

import (
	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/workflow"
)

// viewCheckpoint returns c's view, nil for nil. The nested checkpoint's
// own afterReject has no field in CheckpointState, so the conversion
// drops it.
func viewCheckpoint(c *workflow.Checkpoint) *adminv1.CheckpointView {
	if c == nil {
		return nil
	}
	v := wireOf[adminv1.CheckpointView](c)
	v.Selection = selectionView(v.Selection)
	if v.AfterReject != nil {
		v.AfterReject.Selection = selectionView(v.AfterReject.Selection)
	}
	return &v
}

// viewSelection returns s's view, nil for nil.
func viewSelection(s *workflow.Selection) *adminv1.Selection {
	if s == nil {
		return nil
	}
	v := wireOf[adminv1.Selection](s)
	return selectionView(&v)
}

// selectionView makes v's arrays never null, as the OpenAPI document
// promises.
func selectionView(v *adminv1.Selection) *adminv1.Selection {
	if v == nil {
		return nil
	}
	v.Learnings = nonNil(v.Learnings)
	v.RequiredInputDocuments = nonNil(v.RequiredInputDocuments)
	v.ParametersSchema.Fields = nonNil(v.ParametersSchema.Fields)
	return v
}
