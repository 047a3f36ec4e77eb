package doctext

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestExtractOutputIsBounded: formats that lay text out (a Markdown table
// pads ragged CSV rows, indented JSON repeats its depth on every line) can
// turn kilobytes into gigabytes. Past expansionBudget the text comes back as
// it was sent, still complete and valid.
func TestExtractOutputIsBounded(t *testing.T) {
	t.Parallel()
	raggedCSV := strings.Repeat(",", 2000) + "\n" + strings.Repeat("a\n", 2000)
	deepJSON := strings.Repeat("[", 1000) + strings.Repeat("1,", 5000) + "1" + strings.Repeat("]", 1000)
	tests := []struct {
		name, file, mimeType, content string
		format                        Format
		want                          string
	}{
		{"ragged csv as a table", "rows.csv", "text/csv", raggedCSV, Markdown, raggedCSV},
		{"deep json indented", "deep.json", "application/json", deepJSON, Text, deepJSON + "\n"},
		{"deep json in markdown", "deep.json", "application/json", deepJSON, Markdown, "```json\n" + deepJSON + "\n```\n"},
		{"small ragged csv still a table", "rows.csv", "text/csv", "a,b,c\nd\n", Markdown,
			"| a | b | c |\n| --- | --- | --- |\n| d |  |  |\n"},
		{"nested json still indented", "n.json", "application/json", `{"a":[1,{"b":2}]}`, Text,
			"{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := workflow.DocumentContent{Document: workflow.Document{Name: tt.file, MimeType: tt.mimeType}, Content: []byte(tt.content)}
			got, err := Extract(d, tt.format)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if limit := expansionBudget(len(tt.content)); len(got) > limit {
				t.Fatalf("%d bytes became %d, more than the budget of %d", len(tt.content), len(got), limit)
			}
			if got != tt.want {
				t.Errorf("text = %.200q..., want %.200q...", got, tt.want)
			}
		})
	}
}
