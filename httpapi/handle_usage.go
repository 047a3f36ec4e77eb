package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

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

// UsageAmounts are tokens and, when counted, US dollars.
type UsageAmounts struct {
	Tokens *int64   `json:"tokens,omitempty" doc:"Tokens (absent in a limit without one)"`
	USD    *float64 `json:"usd,omitempty" doc:"US dollars, when a price table or a dollar limit is configured"`
}

// UsageView is GET /api/v1/usage's answer.
type UsageView struct {
	Period   string       `json:"period" enum:"day,month" doc:"The budget's period (UTC)"`
	Used     UsageAmounts `json:"used" doc:"What the current period used"`
	Limit    UsageAmounts `json:"limit" doc:"The budget per period"`
	ResetsAt time.Time    `json:"resetsAt" doc:"When the current period ends"`
	Spent    bool         `json:"spent" doc:"The period's budget is spent: new workflows, rounds and resumes answer 429 until resetsAt (a model call was refused for it, or the used tokens or dollars reached it)"`
}

type usageOutput struct {
	Body UsageView
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

func viewUsage(r UsageReport) UsageView {
	amounts := func(u workflow.Usage, limit bool) UsageAmounts {
		var a UsageAmounts
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
	return UsageView{Period: r.Period, Used: amounts(r.Used, false), Limit: amounts(r.Limit, true), ResetsAt: r.ResetsAt.UTC(), Spent: r.Spent}
}
