package storetest

import (
	"testing"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

// capability is one optional interface a store may implement beside
// workflow.Store, found through its wrappers with workflow.StoreAs.
type capability struct {
	name string
	// of returns the store's capability as workflow.StoreAs finds it (nil
	// when s has none).
	of func(s workflow.Store) any
}

// as is workflow.StoreAs[T] as an untyped nil when s has no T.
func as[T comparable](s workflow.Store) any {
	var zero T
	if c := workflow.StoreAs[T](s); c != zero {
		return c
	}
	return nil
}

// capabilities are every optional interface the gateway's stores
// implement and a feature reads through workflow.StoreAs.
var capabilities = []capability{
	{"RoundLoader", as[workflow.RoundLoader]},
	{"ApprovalIndex", as[workflow.ApprovalIndex]},
	{"StandingStore", as[workflow.StandingStore]},
	{"IdempotencyStore", as[workflow.IdempotencyStore]},
	{"UsageStore", as[workflow.UsageStore]},
	{"WebhookOutbox", as[workflow.WebhookOutbox]},
	{"experiment.Store", as[experiment.Store]},
}

// Capabilities fails t unless wrapped, a chain of store wrappers over
// raw, gives every capability raw has, and the same one (workflow.StoreAs
// looks under wrappers that Unwrap): a wrapper that hid one would turn a
// feature off without a word. raw must have every capability, as the
// gateway's stores do.
func Capabilities(t *testing.T, wrapped, raw workflow.Store) {
	t.Helper()
	for _, c := range capabilities {
		own := c.of(raw)
		switch {
		case own == nil:
			t.Errorf("%T is not a %s", raw, c.name)
		case c.of(wrapped) != own:
			t.Errorf("%s of %T is hidden by the wrappers %T", c.name, raw, wrapped)
		}
	}
}
