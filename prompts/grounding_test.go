package prompts

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUngrounded(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"priority":{"type":"string","enum":["urgent","normal"]},` +
		`"kind":{"const":"incident"},"limit":{"type":"integer","default":25},"tags":{"type":"array","items":{"enum":["billing","network"]}}}}`)
	tests := []struct {
		name    string
		context string
		value   any
		want    bool // grounded
	}{
		// Identifiers and case.
		{"id as given", "Ticket INC-20931 is open.", "INC-20931", true},
		{"id in another case", "Ticket INC-20931 is open.", "inc-20931", true},
		{"invented id", "Ticket INC-20931 is open.", "INC-20932", false},
		{"id re-spaced", "IBAN DE89 3704 0044 0532 0130 00.", "DE89370400440532013000", true},
		{"phone number re-spaced", "Call +49 30 12345 after ten.", "+493012345", true},
		{"phone number with a digit changed", "Call +49 30 12345 after ten.", "+493012346", false},
		{"id with letters only changed", "Ticket INC-20931 is open.", "TKT-20931", false},
		{"email", "Write to anna.berg@example.com today.", "Anna.Berg@example.com", true},
		{"invented email", "Write to Anna Berg.", "anna.berg@example.com", false},
		// Whitespace and typography.
		{"whitespace collapsed", "Customer:  ACME\u00a0 Corp\n(Berlin)", "acme corp", true},
		{"en dash as hyphen", "Range 10\u201320 units, Smith\u2013Jones account.", "Smith-Jones", true},
		{"substring of a word", "The Berlin office.", "Berlin", true},
		{"invented name", "The Berlin office.", "Hamburg", false},
		// Amounts.
		{"amount with thousands comma", "Refund $1,234.50 to the customer.", 1234.5, true},
		{"integer equals float", "Refund 1234.00 EUR.", 1234.0, true},
		{"european amount", "Betrag: 1.234,50 EUR.", 1234.5, true},
		{"spaced thousands, decimal comma", "Montant : 1 234,5 EUR.", 1234.5, true},
		{"swiss apostrophe", "Total CHF 1'234.50.", 1234.5, true},
		{"amount as a string", "Refund $1,234.50 to the customer.", "1234.50", true},
		{"amount string with currency", "Refund 1234.5 EUR.", "$1,234.50", true},
		{"invented amount", "Refund $1,234.50 to the customer.", 1243.5, false},
		{"percent as number", "Discount of 12% on renewal.", 12.0, true},
		{"percent as fraction", "Discount of 12 % on renewal.", 0.12, true},
		{"percent string", "Discount of 12% on renewal.", "12 %", true},
		{"scaled", "Budget 2.5 million EUR.", 2500000.0, true},
		{"k suffix", "Budget 5k.", 5000.0, true},
		{"number word", "Order twenty-five chairs.", 25.0, true},
		{"sign ignored", "Credit 40 EUR.", -40.0, true},
		{"dozen", "Order a dozen chairs.", 12.0, true},
		{"word before a scale", "Order two hundred chairs.", 200.0, true},
		{"bn suffix", "Valued at 3 bn.", 3e9, true},
		{"percent word", "Raise of 12 percent.", 0.12, true},
		{"ambiguous comma read as decimal", "Weight 1,234 kg.", 1.234, true},
		{"version parts", "Deploy v2.3.1 today.", 2.3, true},
		{"zero not given", "Close the ticket.", 0.0, false},
		{"small invented number", "Close the ticket.", 3.0, false},
		{"number inside an id", "Ticket INC-20931.", 20931.0, true},
		{"digits of a longer number", "Account 12345.", "2345", false},
		{"digits of a longer number as a number", "Account 12345.", 2345.0, false},
		// Dates and times.
		{"iso date as given", "Due 2024-03-05.", "2024-03-05", true},
		{"day month-name year", "Due on 5 March 2024.", "2024-03-05", true},
		{"month-name day, year", "Due March 5th, 2024.", "2024-03-05", true},
		{"dotted day first", "Fällig am 05.03.2024.", "2024-03-05", true},
		{"slashes read both ways", "Due 03/05/2024.", "2024-05-03", true},
		{"slashes read both ways, month first", "Due 03/05/2024.", "2024-03-05", true},
		{"other date", "Due on 5 March 2024.", "2024-03-06", false},
		{"year invented", "Due on 5 March.", "2024-03-05", false},
		{"date value in words", "Due 2024-03-05.", "Tuesday, 5 March 2024", true},
		{"date and time", "Meeting on 5 March 2024 at 10:30.", "2024-03-05T10:30:00Z", true},
		{"date and pm time", "Meeting on 5 March 2024 at 2pm.", "2024-03-05T14:00:00Z", true},
		{"date and noon", "Lunch on 5 March 2024 at noon.", "2024-03-05T12:00:00Z", true},
		{"date and dotted time", "Meeting 2024-03-05, 10.30.", "2024-03-05 10:30", true},
		{"two-digit year", "Due 3/5/24.", "2024-03-05", true},
		{"date with midnight", "Due 5 March 2024.", "2024-03-05T00:00:00Z", true},
		{"date with invented time", "Meeting on 5 March 2024.", "2024-03-05T10:30:00Z", false},
		{"year as number", "Due on 5 March 2024.", 2024.0, true},
		{"month as number", "Due on 5 March 2024.", 3.0, true},
		// Free text.
		{"composed text without facts", "Printer on floor 3 is broken.", "The printer is broken, please fix it", true},
		{"composed text with a given number", "Printer on floor 3 is broken.", "Printer broken on floor 3.", true},
		{"composed text with an invented number", "Printer on floor 3 is broken.", "Printer broken on floor 4.", false},
		{"composed text with an invented id", "Printer on floor 3 is broken.", "Follow up on INC-4411 for floor 3", false},
		{"composed text with digits of a year", "Due 2024.", "Printer broken on floor 4", false},
		{"composed text with a given date", "Due 2024-03-05.", "Please finish by 2024-03-05.", true},
		// Never ungrounded.
		{"boolean", "", true, true},
		{"null", "", nil, true},
		{"short string", "", "de", true},
		{"three characters", "", "EUR", true},
		{"enum value", "", "urgent", true},
		{"const value", "", "incident", true},
		{"default value", "", 25.0, true},
		{"enum of array items", "", "billing", true},
		{"action name", "", "tickets.create", true},
		{"objective", "", "Fix the printer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := Grounding{Objective: "Open a ticket to fix the printer.", Context: tt.context, Action: "tickets.create", Schema: schema}
			got := Ungrounded(map[string]any{"v": tt.value}, g)
			if (len(got) == 0) != tt.want {
				t.Errorf("Ungrounded(%#v) = %q, want grounded %v", tt.value, got, tt.want)
			}
		})
	}
}

func TestUngroundedPaths(t *testing.T) {
	t.Parallel()
	g := Grounding{Objective: "Order parts.", Context: "Ship 2 units of SKU-7781 to Anna Berg, Lindenstr. 5, 10115 Berlin; rush: yes."}
	params := map[string]any{
		"customer": map[string]any{"name": "Anna Berg", "city": "Berlin", "zip": "10115", "street": "Hauptstr. 9"},
		"lines": []any{
			map[string]any{"sku": "SKU-7781", "quantity": 2.0},
			map[string]any{"sku": "SKU-9999", "quantity": 1.0},
		},
		"rush":    true,
		"comment": nil,
		"ref":     "PO-5512",
	}
	want := []string{"customer.street", "lines[1].quantity", "lines[1].sku", "ref"}
	if diff := cmp.Diff(want, Ungrounded(params, g)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestUngroundedConstraints(t *testing.T) {
	t.Parallel()
	g := Grounding{Objective: "Open a ticket.", Context: "The printer is broken.",
		Constraints: json.RawMessage(`{"priority":{"maximum":2},"queue":{"enum":["facilities"]}}`)}
	got := Ungrounded(map[string]any{"priority": 2.0, "queue": "facilities", "severity": 4.0}, g)
	if diff := cmp.Diff([]string{"severity"}, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestUngroundedProblemsNameTheField(t *testing.T) {
	t.Parallel()
	got := UngroundedProblems([]string{"ticketId"})
	want := []string{"parameters.ticketId: this value appears neither in the objective nor in the parameters context: take it from them, do not invent it"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("lines[%d].sku", i)
	}
	got = UngroundedProblems(many)
	if len(got) != 11 || !strings.HasPrefix(got[9], "parameters.lines[9].sku: ") ||
		got[10] != "parameters: 15 more values appear neither in the objective nor in the parameters context" {
		t.Errorf("25 paths gave %d lines, last %q; want 10 and a count of the 15 others", len(got), got[len(got)-1])
	}
}

// FuzzUngrounded holds that Ungrounded never panics and that a value is
// always grounded by a context that holds it as it is.
func FuzzUngrounded(f *testing.F) {
	f.Add("INC-20931", "Ticket INC-20931, $1,234.50 due 5 March 2024 at 2pm.")
	f.Add("2024-03-05T10:30:00Z", "05.03.2024 10.30")
	f.Add("1 234,5 €", "twenty-five 12 % 5k")
	f.Add("\xff\u2028 9", "")
	f.Add("\x80000", "0")
	f.Fuzz(func(t *testing.T, value, context string) {
		_ = Ungrounded(map[string]any{"v": value, "n": []any{map[string]any{"x": value}}}, Grounding{Context: context})
		if got := Ungrounded(map[string]any{"v": value}, Grounding{Context: context + " " + value}); got != nil {
			t.Errorf("value %q with context %q holding it: ungrounded %q", value, context, got)
		}
	})
}
