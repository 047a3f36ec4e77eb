package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBudgetGauges: a user's usage and limits are served per user and
// unit; a unit without a limit has no limit gauge.
func TestBudgetGauges(t *testing.T) {
	m := New()
	m.BudgetUsage("alice", 1200, 2_500_000, 5000, 0)
	m.BudgetUsage("alice", 1500, 3_000_000, 5000, 0) // the newest figures win
	m.BudgetUsage("bob", 10, 0, 0, 1_000_000)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`twostep_budget_used{unit="tokens",user="alice"} 1500`,
		`twostep_budget_used{unit="usd",user="alice"} 3`,
		`twostep_budget_limit{unit="tokens",user="alice"} 5000`,
		`twostep_budget_limit{unit="usd",user="bob"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, absent := range []string{`twostep_budget_limit{unit="usd",user="alice"}`, `twostep_budget_limit{unit="tokens",user="bob"}`} {
		if strings.Contains(string(body), absent) {
			t.Errorf("metrics have %s, a limit the budget does not set", absent)
		}
	}
}
