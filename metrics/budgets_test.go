package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBudgetMetricsHaveNoUserLabel: budget figures are served as the share
// of the limit used, by unit, with no user label (one series per user
// would grow without bound); a unit without a limit records nothing.
func TestBudgetMetricsHaveNoUserLabel(t *testing.T) {
	m := New()
	m.BudgetUsage(1200, 2_500_000, 5000, 0)
	m.BudgetUsage(5000, 3_000_000, 5000, 0)
	m.BudgetUsage(10, 1_000_000, 0, 1_000_000)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`twostep_budget_used_ratio_bucket{unit="tokens",le="0.25"} 1`,
		`twostep_budget_used_ratio_bucket{unit="tokens",le="0.9"} 1`,
		`twostep_budget_used_ratio_bucket{unit="tokens",le="1"} 2`,
		`twostep_budget_used_ratio_count{unit="tokens"} 2`,
		`twostep_budget_used_ratio_count{unit="usd"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "twostep_budget") && strings.Contains(line, "user=") {
			t.Errorf("a budget series is labelled by user: %s", line)
		}
	}
}
