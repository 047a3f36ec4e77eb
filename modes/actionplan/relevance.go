package actionplan

import (
	"slices"
	"strings"
	"unicode"

	"github.com/twostep/twostep/workflow"
)

// DefaultTopK is how many actions the plan prompt offers (besides
// workflow.complete) when Options.TopK is 0.
const DefaultTopK = 8

// maxKeywords bounds how many distinct prompt words are scored, so a huge
// pasted prompt costs no more than a long one.
const maxKeywords = 256

// Score weights: a prompt word that matches a word of the action's name
// counts more than one matching its description.
const (
	nameWeight        = 3
	descriptionWeight = 1
)

// Relevant returns the actions the planner is offered for prompt: the k
// actions (workflow.complete aside) with the highest keyword score, highest
// first, ties in the given order, then workflow.complete when it is among
// actions — it is always offered and not counted in k. k <= 0 means
// DefaultTopK. With k at least the number of actions every action is
// offered, in score order.
//
// The score of an action is, over the distinct words of the prompt (lower
// case, stop words removed), nameWeight for each word matching a word of
// its name ("document.extract", "crm_lookup" and "sendEmail" split into
// words) plus descriptionWeight for each word matching a word of its
// description. Words match when equal or when they share a stem (one a
// prefix of the other, or a long common prefix: "process" and
// "processing", "summary" and "summarize"). The result depends only on
// the arguments.
func Relevant(actions []workflow.ActionSpec, prompt string, k int) []workflow.ActionSpec {
	if k <= 0 {
		k = DefaultTopK
	}
	keywords := promptKeywords(prompt)
	type scored struct {
		spec  workflow.ActionSpec
		score int
	}
	var (
		candidates []scored
		complete   []workflow.ActionSpec
	)
	for _, a := range actions {
		if a.Name == workflow.CompleteAction {
			complete = append(complete, a)
			continue
		}
		candidates = append(candidates, scored{a, score(a, keywords)})
	}
	slices.SortStableFunc(candidates, func(x, y scored) int { return y.score - x.score })
	out := make([]workflow.ActionSpec, 0, min(k, len(candidates))+len(complete))
	for _, c := range candidates[:min(k, len(candidates))] {
		out = append(out, c.spec)
	}
	return append(out, complete...)
}

// score is the keyword score of a for the prompt's keywords.
func score(a workflow.ActionSpec, keywords []string) int {
	name := words(a.Name)
	desc := words(a.Description)
	total := 0
	for _, kw := range keywords {
		if anyMatch(kw, name) {
			total += nameWeight
		}
		if anyMatch(kw, desc) {
			total += descriptionWeight
		}
	}
	return total
}

func anyMatch(kw string, list []string) bool {
	for _, w := range list {
		if match(kw, w) {
			return true
		}
	}
	return false
}

// match reports whether two lower-case words share a stem: they are equal
// after dropping a plural "s", one (of at least 4 letters) is a prefix of
// the other, or they share a prefix of at least 5 letters that leaves at
// most 2 letters of the shorter one.
func match(a, b string) bool {
	a, b = singular(a), singular(b)
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) >= 4 && strings.HasPrefix(b, a) {
		return true
	}
	n := 0
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n >= 5 && n >= len(a)-2
}

func singular(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// promptKeywords returns the prompt's distinct words that are not stop
// words, in order of first use, at most maxKeywords.
func promptKeywords(prompt string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words(prompt) {
		if seen[w] || isStopWord(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxKeywords {
			break
		}
	}
	return out
}

// words splits s into lower-case words of letters and digits, also at
// lower-to-upper case changes ("sendEmail" gives "send", "email"). Words
// of one letter are left out.
func words(s string) []string {
	var (
		out  []string
		cur  []rune
		prev rune
	)
	flush := func() {
		if len(cur) > 1 {
			out = append(out, string(cur))
		}
		cur = cur[:0]
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(r))
		default:
			cur = append(cur, unicode.ToLower(r))
		}
		prev = r
	}
	flush()
	return out
}

// isStopWord reports whether w is a common English word that says nothing
// about which action fits a prompt.
func isStopWord(w string) bool {
	switch w {
	case "the", "and", "for", "with", "from", "into", "onto", "that", "this", "these", "those", "then", "than",
		"what", "when", "where", "which", "who", "whom", "how", "why", "please", "can", "could", "would", "should",
		"will", "shall", "may", "might", "must", "you", "your", "yours", "our", "ours", "are", "was", "were",
		"been", "being", "be", "to", "of", "in", "on", "an", "is", "it", "its", "me", "my", "we", "us", "do",
		"does", "did", "done", "all", "any", "some", "each", "as", "at", "by", "or", "not", "no", "yes", "up",
		"out", "if", "so", "also", "them", "they", "their", "there", "here", "has", "have", "had", "just",
		"about", "over", "under", "after", "before", "again", "more", "most", "very", "such", "only", "own",
		"same", "too", "now", "want", "need", "like", "let", "am":
		return true
	}
	return false
}
