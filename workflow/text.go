package workflow

import "strconv"

// Count writes n with its noun in the right number ("1 document",
// "2 documents"); plural is the noun's plural form, or "" to add "s".
// Prompts, summaries and messages all count things the same way.
func Count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	if plural == "" {
		plural = singular + "s"
	}
	return strconv.Itoa(n) + " " + plural
}
