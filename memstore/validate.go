package memstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// checkID returns ctx's error, or KindInvalid when id is empty.
func checkID(ctx context.Context, what, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if id == "" {
		return workflow.Errorf(workflow.KindInvalid, "%s is required", what)
	}
	return nil
}
