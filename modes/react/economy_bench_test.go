package react_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/enginetest"
)

// twentySteps is the scripted 20-step round of the economy benchmark:
// nineteen echoes of a result of about 2 KB (a page of line items, as an
// HTTP action or an extraction returns), then complete.
func twentySteps() []string {
	detail := strings.Repeat("Line item detail with the account, the period, the amount and the note attached to it. ", 20)
	var r [][]string
	for i := range 19 {
		result := fmt.Sprintf("Finding %d: the quarterly figures for region %d show revenue of %d.4 million, costs of %d.1 million "+
			"and a margin that moved by %d points. %s", i+1, i+1, 10+i, 7+i, i%5, detail)
		r = append(r, []string{
			enginetest.Select(enginetest.Echo, fmt.Sprintf("record the figures of region %d", i+1), nil, "", "text"),
			enginetest.Params(map[string]any{"text": result}),
		})
	}
	return replies(append(r, enginetest.Completes("all twenty steps done"))...)
}

// economyReport is an uploaded report of about 4 KB.
var economyReport = strings.Repeat("Quarterly report. Revenue grew in every region; costs rose with the supplier delay. ", 48)

// BenchmarkPromptEconomy runs the scripted 20-step workflow (a prompt, a
// 4 KB report, nineteen actions, the answer) through the real React mode
// and templates, with prompt tokens counted by the gateway's tokenizer
// (cl100k_base), and reports the prompt economy of DESIGN §9.5:
//
//   - s2/s1-median: the median over steps of Stage 2 / Stage 1 prompt tokens;
//   - s1-step20/step1: Stage 1's prompt tokens at step 20 / at step 1;
//   - total/naive: Stage 1 + Stage 2 prompt tokens / the naive single-prompt
//     ReAct estimate (workflow.ComputeEconomy), the economy route's ratio.
func BenchmarkPromptEconomy(b *testing.B) {
	tok := &llm.Tokenizer{}
	script := twentySteps()
	inner := &llm.Scripted{Reply: func(n int, _ workflow.ModelRequest) (string, error) { return script[n%len(script)], nil }}
	model := workflow.ModelFunc(func(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		resp, err := inner.Generate(ctx, req)
		resp.PromptTokens, resp.CompletionTokens = 0, tok.Count(resp.Text)
		for _, m := range req.Messages {
			resp.PromptTokens += tok.Count(m.Content)
		}
		return resp, err
	})
	cfg := testConfig("bench")
	cfg.PollInterval = time.Second
	store := newStore()
	e := startEngine(b, cfg, store, model, enginetest.NewRegistry())
	ctx := context.Background()
	var eco workflow.Economy
	for b.Loop() {
		wf, err := e.Create(ctx, workflow.NewWorkflow{
			UserID: "alice", MaxSteps: 20,
			Prompt: "Go through the attached quarterly report region by region, record each finding, then summarise.",
			Documents: []workflow.DocumentContent{{Document: workflow.Document{Name: "report.txt", MimeType: "text/plain"},
				Content: []byte(economyReport)}},
		})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted || got.Step != 20 {
			b.Fatalf("round ended %+v, %v", got, err)
		}
		eco = economyOf(b, store, wf.ID, tok.Count)
	}
	if len(eco.Steps) != 20 {
		b.Fatalf("%d steps in the report, want 20", len(eco.Steps))
	}
	ratios := make([]float64, len(eco.Steps))
	for i, s := range eco.Steps {
		ratios[i] = float64(s.Stage2Tokens) / float64(s.Stage1Tokens)
	}
	slices.Sort(ratios)
	b.ReportMetric((ratios[9]+ratios[10])/2, "s2/s1-median")
	b.ReportMetric(float64(eco.Steps[19].Stage1Tokens)/float64(eco.Steps[0].Stage1Tokens), "s1-step20/step1")
	b.ReportMetric(eco.Ratio, "total/naive")
	b.Logf("stage 1 %d, stage 2 %d, naive estimate %d prompt tokens", eco.Totals.Stage1Tokens, eco.Totals.Stage2Tokens, eco.NaiveReactEstimate)
}

// economyOf computes the workflow's economy as the admin route does.
func economyOf(tb testing.TB, store workflow.Store, id string, count func(string) int) workflow.Economy {
	tb.Helper()
	ctx := context.Background()
	return workflow.ComputeEconomy(workflow.EconomyInput{
		Traces: enginetest.Traces(tb, store, id), Messages: enginetest.Messages(tb, store, id), Count: count,
		DocumentText: func(d workflow.Document) string {
			c, err := store.DocumentContent(ctx, id, d.ID)
			if err != nil {
				tb.Fatal(err)
			}
			return string(c.Content)
		},
	})
}
