package actionplan_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/workflow"
)

// catalogue is a registry's worth of actions, sorted by name like
// Registry.Actions returns them.
func catalogue() []workflow.ActionSpec {
	return []workflow.ActionSpec{
		{Name: "ai.process", Description: "Have the AI model carry out one instruction (summarise, translate, classify, draft) on the input documents.",
			Parameters: schema(`"aiPrompt": {"type": "string"}, "resultFileName": {"type": "string"}`, "aiPrompt"), Documents: workflow.DocumentsOptional},
		{Name: "calendar.createEvent", Description: "Create a calendar event for the user."},
		{Name: "crm.lookupCustomer", Description: "Look up a customer record in the CRM by name or id."},
		{Name: "document.extract", Description: "Extract the text of the input documents (PDF, HTML, CSV, JSON).",
			Parameters: schema(`"format": {"type": "string", "enum": ["text", "markdown"]}`), Documents: workflow.DocumentsRequired},
		{Name: "document.generate", Description: "Create one document with the given file name and content."},
		{Name: "email.send", Description: "Send an email message to a recipient.", Effect: workflow.EffectWrite,
			Parameters: schema(`"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}`, "to", "subject", "body"),
			Documents:  workflow.DocumentsOptional, ConnectionKind: "smtp", ConnectionRequired: true},
		{Name: "http.request", Description: "Call the HTTP API of one of the user's connections."},
		{Name: "invoice.create", Description: "Create an invoice in the ERP for a customer."},
		{Name: "sheet.append", Description: "Append rows to a spreadsheet."},
		{Name: "translate.text", Description: "Translate text between languages.",
			Parameters: schema(`"targetLanguage": {"type": "string"}`, "targetLanguage"), Documents: workflow.DocumentsRequired},
		{Name: workflow.CompleteAction, Description: "End the round with a final answer to the user.",
			Parameters: schema(`"message": {"type": "string"}`, "message")},
		{Name: "weather.forecast", Description: "Get the weather forecast for a city."},
	}
}

// schema returns an object schema with the given properties (JSON text)
// and required names.
func schema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ` + string(req) +
		`, "properties": {` + props + `}}`)
}

func names(specs []workflow.ActionSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func TestRelevantTopK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		prompt string
		k      int
		want   []string
	}{
		// document.extract 5 (name 3, description 2), ai.process 1
		// ("summarise"), then a tie at 0 kept in registry order.
		{"name words outweigh description words", "Extract the tables from the PDF and summarize them", 3,
			[]string{"document.extract", "ai.process", "calendar.createEvent", workflow.CompleteAction}},
		// invoice.create 9, crm.lookupCustomer 8 ("look" matches "lookup"),
		// calendar.createEvent 3.
		{"camelCase names and stems match", "Look up the customer Acme and create an invoice for their last order", 3,
			[]string{"invoice.create", "crm.lookupCustomer", "calendar.createEvent", workflow.CompleteAction}},
		{"plural and -ing forms match", "sending emails to the recipients", 2,
			[]string{"email.send", "ai.process", workflow.CompleteAction}},
		{"no keyword keeps registry order", "hello there", 3,
			[]string{"ai.process", "calendar.createEvent", "crm.lookupCustomer", workflow.CompleteAction}},
		{"stop words alone score nothing", "what is the and for with", 2,
			[]string{"ai.process", "calendar.createEvent", workflow.CompleteAction}},
		{"k zero means the default", "weather forecast for Paris", 0,
			[]string{"weather.forecast", "ai.process", "calendar.createEvent", "crm.lookupCustomer", "document.extract",
				"document.generate", "email.send", "http.request", workflow.CompleteAction}},
		{"k beyond the catalogue offers everything once", "translate this text", 50,
			[]string{"translate.text", "ai.process", "document.extract", "calendar.createEvent", "crm.lookupCustomer",
				"document.generate", "email.send", "http.request", "invoice.create", "sheet.append", "weather.forecast",
				workflow.CompleteAction}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := actionplan.Relevant(catalogue(), tc.prompt, tc.k)
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("Relevant(%q, %d) (-want +got):\n%s", tc.prompt, tc.k, diff)
			}
		})
	}
}

func TestRelevantWithoutComplete(t *testing.T) {
	t.Parallel()
	specs := catalogue()[:3]
	if got := names(actionplan.Relevant(specs, "customer", 1)); !cmp.Equal(got, []string{"crm.lookupCustomer"}) {
		t.Errorf("Relevant = %v, want just the best match (no workflow.complete to add)", got)
	}
	if got := actionplan.Relevant(nil, "anything", 3); len(got) != 0 {
		t.Errorf("Relevant(nil) = %v, want none", got)
	}
}

func BenchmarkRelevant(b *testing.B) {
	specs := catalogue()
	for range 4 {
		specs = append(specs, specs...)
	}
	prompt := ""
	for range 50 {
		prompt += "Extract the tables from the quarterly PDF reports, translate them and email a summary to finance. "
	}
	b.ReportAllocs()
	for b.Loop() {
		actionplan.Relevant(specs, prompt, actionplan.DefaultTopK)
	}
}
