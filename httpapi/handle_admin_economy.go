package httpapi

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/workflow"
)

func (a *Admin) registerEconomy(api huma.API) {
	huma.Register(api, adminOp("adminGetEconomy", http.MethodGet, "/admin/v1/workflows/{id}/economy",
		"What the workflow's steps cost: each step's Stage 1 and Stage 2 tokens (input, cached, output) against the same steps "+
			"as the plain tool-calling loop would have sent them, in dollars at the configured prices or in equivalent tokens (docs/economy.md)", 404),
		a.getEconomy)
}

// getEconomy computes the report (economy.Compute) from the kept traces,
// the messages, the produced documents' text and the registered actions.
// Traces beyond the store's cap are gone, so the earliest steps of a very
// long workflow may be missing (from both sides of the comparison).
func (a *Admin) getEconomy(ctx context.Context, in *WorkflowPath) (*body[adminv1.EconomyView], error) {
	traces, err := a.reads.Traces(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetEconomy", err)
	}
	_, msgs, err := a.reads.Messages(ctx, in.ID, 0, 0)
	if err != nil {
		return nil, a.fail(ctx, "adminGetEconomy", err)
	}
	texts := map[string]string{}
	var readErr error
	docText := func(d workflow.Document) string {
		if t, ok := texts[d.ID]; ok || readErr != nil {
			return t
		}
		c, err := a.reads.Document(ctx, in.ID, d.ID)
		if err != nil {
			if workflow.KindOf(err) != workflow.KindNotFound {
				readErr = err
			}
			return ""
		}
		texts[d.ID] = a.documentText(c)
		return texts[d.ID]
	}
	count := a.countTokens
	if count == nil {
		count = func(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }
	}
	report := economy.Compute(economy.Input{
		Traces: traces, Messages: msgs, Actions: a.registry.Actions(), Prices: a.prices,
		Count: count, DocumentText: docText,
	})
	if readErr != nil {
		return nil, a.fail(ctx, "adminGetEconomy", readErr)
	}
	return &body[adminv1.EconomyView]{Body: viewEconomy(report)}, nil
}

// documentText is a produced document's text as the plain loop's tool
// result carries it; a document the extractor cannot read counts as empty.
func (a *Admin) documentText(c workflow.DocumentContent) string {
	if a.docText != nil {
		t, err := a.docText(c)
		if err != nil {
			return ""
		}
		return t
	}
	if strings.HasPrefix(c.MimeType, "text/") && utf8.Valid(c.Content) {
		return string(c.Content)
	}
	return ""
}
