package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// UsageReport is a user's budget and what the current period used of it.
type UsageReport struct {
	Period   string // day or month
	Used     workflow.Usage
	Limit    workflow.Usage // zero fields: no limit on them
	ResetsAt time.Time
	// Dollars says whether dollars are counted (a price table or a USD
	// limit is configured).
	Dollars bool
	// Spent: new work is refused (429) until ResetsAt.
	Spent bool
}

// UsageReader reports userID's usage; ok is false when the user has no
// budget.
type UsageReader func(ctx context.Context, userID string) (r UsageReport, ok bool, err error)

type usageOutput struct {
	Body apiv1.UsageView
}

func (s *Server) registerUsage(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "getUsage", Method: http.MethodGet, Path: "/api/v1/usage",
		Summary: "The caller's budget and what the current period used of it", Tags: []string{"usage"},
		Errors: []int{401, 404},
	}, func(ctx context.Context, _ *struct{}) (*usageOutput, error) {
		if s.usage == nil {
			return nil, huma.Error404NotFound("no budgets are configured on this gateway")
		}
		r, ok, err := s.usage(ctx, UserFrom(ctx))
		if err != nil {
			return nil, s.fail(ctx, "getUsage", err)
		}
		if !ok {
			return nil, huma.Error404NotFound("no budget applies to this user")
		}
		return &usageOutput{Body: viewUsage(r)}, nil
	})
}

func viewUsage(r UsageReport) apiv1.UsageView {
	amounts := func(u workflow.Usage, limit bool) apiv1.UsageAmounts {
		var a apiv1.UsageAmounts
		if !limit || u.Tokens > 0 {
			t := u.Tokens
			a.Tokens = &t
		}
		if r.Dollars && (!limit || u.Micros > 0) {
			usd := float64(u.Micros) / 1e6
			a.USD = &usd
		}
		return a
	}
	return apiv1.UsageView{Period: r.Period, Used: amounts(r.Used, false), Limit: amounts(r.Limit, true), ResetsAt: r.ResetsAt.UTC(), Spent: r.Spent}
}
