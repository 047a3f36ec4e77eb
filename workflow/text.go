package workflow

import "github.com/twostep/twostep/templates/notices"

// Count writes n with its noun in the right number ("1 document",
// "2 documents"); plural is the noun's plural form, or "" to add "s".
// Prompts, summaries and messages all count things the same way: this is
// notices.Count, the one rule.
func Count(n int, singular, plural string) string {
	return notices.Count(n, singular, plural)
}
