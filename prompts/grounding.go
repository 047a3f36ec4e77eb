package prompts

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Grounding is what a Stage 2 call was shown, the only source its values
// may come from (DESIGN §10.4): Ungrounded checks a reply against it.
type Grounding struct {
	// Objective, Context and Action are the step's actionObjective,
	// parametersContext and action name.
	Objective, Context, Action string
	// Schema is the action's parameter schema: every enum, const and
	// default value in it counts as given. Its descriptions do not: a value
	// copied from an example is as invented as any other.
	Schema json.RawMessage
	// Constraints are JSON Schema fragments Stage 2 was given beside the
	// schema (an intent approval's): their values count as given and their
	// text as shown. Nil when there are none.
	Constraints json.RawMessage
}

// Stage2Grounding is what a Stage 2 call for sel shows the model of
// action spec (Stage2Input's placeholders): the one source its values may
// come from, for every caller that judges a Stage 2 reply.
func Stage2Grounding(sel workflow.Selection, spec workflow.ActionSpec) Grounding {
	return Grounding{Objective: sel.ActionObjective, Context: sel.ParametersContext, Action: sel.Action, Schema: spec.Parameters}
}

// minGroundedRunes is the length from which a string value must appear in
// what Stage 2 was shown: shorter ones ("de", "EUR", "yes") are never
// ungrounded.
const minGroundedRunes = 4

// Ungrounded returns the path of every value of params that appears
// nowhere in what Stage 2 was shown (g), in path order: "ticketId",
// "customer.city", "lines[1].sku". It is pure and never panics.
//
// Booleans, nulls and strings under four characters are never ungrounded,
// nor is any value equal to an enum, const or default of g.Schema or
// g.Constraints. A number is grounded when it equals (ignoring its sign)
// a number written in the shown text in any common form: 1234.50,
// 1,234.5, 1.234,5, 1 234,5, $1,234, 12 % (also 0.12), 5k, 2.5 million,
// twenty-five; or a part of a date there. A string is grounded when,
// lower-cased with its whitespace collapsed, it is part of the shown text
// so normalised (not as digits of a longer number); or it is one number,
// in any form, that is grounded; or it is a date (or date and time) the
// text gives in a common form (2024-03-05, 5 March 2024, March 5, 2024,
// 05.03.2024, 3/5/2024 read both ways); or, holding a digit, its letters
// and digits alone are part of the text's (an IBAN or a phone number
// re-spaced); or it has several words and each word with a digit, an "@"
// or "://" in it is grounded by those rules: free text Stage 2 composes
// is judged by the facts it carries. docs/grounding.md explains each rule.
func Ungrounded(params map[string]any, g Grounding) []string {
	if len(params) == 0 {
		return nil
	}
	s := newShown(g)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		out = s.walk(out, k, params[k])
	}
	return out
}

// maxUngroundedLines bounds the feedback lines UngroundedProblems writes.
const maxUngroundedLines = 10

// UngroundedProblems returns one feedback line per ungrounded path, in
// the form of the other Stage 2 problems ("parameters.<path>: ..."): at
// most maxUngroundedLines, then one line counting the rest.
func UngroundedProblems(paths []string) []string {
	out := make([]string, 0, min(len(paths), maxUngroundedLines+1))
	for i, p := range paths {
		if i == maxUngroundedLines {
			out = append(out, fmt.Sprintf("parameters: %d more values appear neither in the objective nor in the parameters context", len(paths)-i))
			break
		}
		line := fmt.Sprintf("parameters.%s: this value appears neither in the objective nor in the parameters context: "+
			"take it from them, do not invent it", p)
		out = append(out, textclip.Clip(line, workflow.MaxProblemLine))
	}
	return out
}

// walk appends path to out when v (or, for an object or array, the path
// of each leaf of v) is ungrounded.
func (s *shown) walk(out []string, path string, v any) []string {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = s.walk(out, path+"."+k, v[k])
		}
	case []any:
		for i, e := range v {
			out = s.walk(out, path+"["+strconv.Itoa(i)+"]", e)
		}
	case string:
		if !s.stringGrounded(v) {
			out = append(out, path)
		}
	default:
		if r, ok := numberOf(v); ok && !s.numberGrounded(r) {
			out = append(out, path)
		}
	}
	return out
}

// numberOf returns a JSON number of params (float64, json.Number or an
// integer) as an exact rational; false for anything else.
func numberOf(v any) (*big.Rat, bool) {
	var text string
	switch v := v.(type) {
	case float64:
		text = strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		text = v.String()
	case int:
		text = strconv.Itoa(v)
	case int64:
		text = strconv.FormatInt(v, 10)
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(text)
	return r, ok
}

// shown is a Grounding made ready for lookups. Only the normalised text
// is made at once: most values are found in it as they are, so the
// numbers, dates and given values are read on the first value that needs
// them.
type shown struct {
	g Grounding
	// text is the shown text normalised (normText).
	text string
	// compact is text's letters and digits alone ("" until first used).
	compact string
	// facts are the numbers, dates and times of text (nil until first used).
	facts *textFacts
	// given are the schema's and constraints' values: strings normalised,
	// numbers as ratKey (nil until first used).
	given map[string]bool
}

// textFacts are the numbers, dates and times a text gives.
type textFacts struct {
	// numbers are the keys (ratKey) of every number the text gives.
	numbers map[string]bool
	dates   map[civilDate]bool
	// minutes are the times of day the text gives, in minutes after 0:00.
	minutes map[int]bool
}

func newShown(g Grounding) *shown {
	return &shown{g: g, text: normText(g.Action, g.Objective, g.Context, string(g.Constraints))}
}

// textFacts returns the numbers, dates and times of the text, read once.
func (s *shown) textFacts() *textFacts {
	if s.facts != nil {
		return s.facts
	}
	f := &textFacts{numbers: map[string]bool{}, dates: map[civilDate]bool{}, minutes: map[int]bool{}}
	scanNumbers(s.text, func(r *big.Rat) { f.numbers[ratKey(r)] = true })
	scanDates(s.text, func(d civilDate) {
		f.dates[d] = true
		for _, n := range []int{d.y, d.m, d.d} {
			f.numbers[ratKey(big.NewRat(int64(n), 1))] = true
		}
	})
	scanTimes(s.text, func(m int) { f.minutes[m] = true })
	s.facts = f
	return f
}

// isGiven reports whether key (a normalised string or a ratKey) is a
// value of the schema or the constraints, read once.
func (s *shown) isGiven(key string) bool {
	if s.given == nil {
		s.given = map[string]bool{}
		for _, schema := range []json.RawMessage{s.g.Schema, s.g.Constraints} {
			var doc any
			if json.Unmarshal(schema, &doc) == nil {
				s.addGiven(doc, false)
			}
		}
	}
	return s.given[key]
}

// addGiven adds the leaves of every enum, const and default in doc (a
// JSON Schema, decoded) to s.given; leaves reports whether doc is such a
// value itself.
func (s *shown) addGiven(doc any, leaves bool) {
	switch v := doc.(type) {
	case map[string]any:
		for k, e := range v {
			s.addGiven(e, leaves || k == "const" || k == "default" || (k == "enum" && isArray(e)))
		}
	case []any:
		for _, e := range v {
			s.addGiven(e, leaves)
		}
	case string:
		if leaves {
			s.given[normText(v)] = true
		}
	default:
		if r, ok := numberOf(v); ok && leaves {
			s.given[ratKey(r)] = true
		}
	}
}

func isArray(v any) bool { _, ok := v.([]any); return ok }

// numberGrounded reports whether r is given or, ignoring its sign, a
// number of the text.
func (s *shown) numberGrounded(r *big.Rat) bool {
	return s.isGiven(ratKey(r)) || s.textFacts().numbers[ratKey(new(big.Rat).Abs(r))]
}

// stringGrounded applies the string rules of Ungrounded to v.
func (s *shown) stringGrounded(v string) bool {
	n := normText(v)
	if utf8.RuneCountInString(n) < minGroundedRunes || containsBounded(s.text, n) || s.isGiven(n) {
		return true
	}
	if s.factGrounded(n) {
		return true
	}
	words := strings.Fields(n)
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		w = strings.TrimFunc(w, isEdgePunct)
		if isFact(w) && !s.factGrounded(w) {
			return false
		}
	}
	return true
}

// factGrounded reports whether n (normalised) is part of the text
// (containsBounded), one grounded number, a grounded date, or, holding a
// digit, part of the text's letters and digits (compactGrounded).
func (s *shown) factGrounded(n string) bool {
	if containsBounded(s.text, n) {
		return true
	}
	if nums, ok := parseNumber(n); ok {
		for _, r := range nums {
			if s.numberGrounded(r) {
				return true
			}
		}
	} else if d, minute, ok := parseDateValue(n); ok {
		return s.dateGrounded(d, minute)
	}
	return s.compactGrounded(n)
}

// compactGrounded reports whether n holds a digit and its letters and
// digits alone are part of the text's (an IBAN or a phone number written
// with other spaces), not as digits of a longer number.
func (s *shown) compactGrounded(n string) bool {
	c := compactText(n)
	if !strings.ContainsFunc(c, unicode.IsDigit) || len(c) < minGroundedRunes {
		return false
	}
	if s.compact == "" {
		s.compact = compactText(s.text)
	}
	return containsBounded(s.compact, c)
}

// dateGrounded reports whether one reading of the date is in the text
// and, when minute is not 0 or -1, that time of day too.
func (s *shown) dateGrounded(ds []civilDate, minute int) bool {
	f := s.textFacts()
	if minute > 0 && !f.minutes[minute] {
		return false
	}
	for _, d := range ds {
		if f.dates[d] {
			return true
		}
	}
	return false
}

// containsBounded reports whether n is part of text, not as digits of a
// longer number: "4" is no part of "2024", nor "2345" of "12345".
func containsBounded(text, n string) bool {
	for off := 0; off <= len(text)-len(n); {
		i := strings.Index(text[off:], n)
		if i < 0 {
			return false
		}
		i += off
		before := i == 0 || !isDigit(text[i-1]) || !isDigit(n[0])
		after := i+len(n) == len(text) || !isDigit(text[i+len(n)]) || !isDigit(n[len(n)-1])
		if before && after {
			return true
		}
		off = i + 1
	}
	return false
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// isFact reports whether a word of free text carries a fact Stage 2 must
// not invent: a digit, an e-mail address or a URL.
func isFact(w string) bool {
	return strings.ContainsFunc(w, unicode.IsDigit) || strings.Contains(w, "@") || strings.Contains(w, "://")
}

// isEdgePunct is the punctuation trimmed from a word of free text.
func isEdgePunct(r rune) bool { return strings.ContainsRune(`.,;:!?()[]{}"'`, r) }

// normText joins parts with spaces, lower-cased, with dashes and
// typographic quotes folded and every run of whitespace (non-breaking
// spaces included) collapsed to one space, trimmed: one allocation, none
// for one part already so.
func normText(parts ...string) string {
	if len(parts) == 1 && isNorm(parts[0]) {
		return parts[0]
	}
	var b strings.Builder
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b.Grow(n)
	space := false
	for _, p := range parts {
		for _, r := range p {
			if unicode.IsSpace(r) {
				space = b.Len() > 0
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(foldRune(r))
		}
		space = b.Len() > 0
	}
	return b.String()
}

// isNorm reports whether normText would return s as it is (which writes
// each byte of invalid UTF-8 as U+FFFD).
func isNorm(s string) bool {
	prev := ' '
	for _, r := range s {
		if unicode.IsSpace(r) && (r != ' ' || prev == ' ') || foldRune(r) != r || r == utf8.RuneError {
			return false
		}
		prev = r
	}
	return prev != ' ' || s == ""
}

// foldRune lower-cases r and folds dashes and typographic quotes to
// their ASCII forms, which a model writes freely in their place.
func foldRune(r rune) rune {
	switch r {
	case '\u2013', '\u2014', '\u2212':
		return '-'
	case '\u2018', '\u2019':
		return '\''
	case '\u201c', '\u201d':
		return '"'
	}
	return unicode.ToLower(r)
}

// compactText keeps the letters and digits of s.
func compactText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// ratKey is r's canonical form, equal for equal numbers (1234.50 and 1234.5).
func ratKey(r *big.Rat) string { return "#" + r.RatString() }
