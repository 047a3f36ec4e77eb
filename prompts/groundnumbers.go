package prompts

import (
	"math/big"
	"regexp"
	"strings"
)

// The numbers of a text, for Ungrounded. A run of digits joined by single
// separators (".", ",", "'", " ") is read in every way a reader might:
// each digit group alone, two groups joined by "." or "," as a decimal,
// and the whole run (and each of its space-separated parts) as a number
// with "," or "." as the decimal mark and the other marks grouping
// thousands. A "%" after it adds the fraction; a scale word (k, thousand,
// m, million, bn, billion) the scaled value. Reading too many numbers
// lets an invented one pass now and then; reading too few flags a value
// the context gave — the worse mistake for a check meant to be trusted.

// numberRun is a run of digits and separators, then what follows it.
var numberRun = regexp.MustCompile(`\d+(?:[.,' ]\d+)*`)

// numberSuffix is what may follow a number: a percent sign or a scale.
var numberSuffix = regexp.MustCompile(`^ ?(%|percent|per cent|k|thousand|m|mn|million|bn|b|billion)(?:[^\pL]|$)`)

var scales = map[string]int64{"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "b": 1e9, "billion": 1e9}

// scanNumbers calls add with every reading of every number of text
// (normalised, lower-case), its number words included.
func scanNumbers(text string, add func(*big.Rat)) {
	for _, loc := range numberRun.FindAllStringIndex(text, -1) {
		run := text[loc[0]:loc[1]]
		groups, seps := splitRun(run)
		for i, g := range groups {
			add(digitsRat(g))
			if i > 0 && (seps[i-1] == '.' || seps[i-1] == ',') {
				add(decimalRat(groups[i-1], g))
			}
		}
		whole := readings(run)
		for _, part := range strings.Split(run, " ") {
			whole = append(whole, readings(part)...)
		}
		whole = append(whole, digitsRat(groups[len(groups)-1]))
		suffix := numberSuffix.FindStringSubmatch(text[loc[1]:min(len(text), loc[1]+12)])
		for _, r := range whole {
			add(r)
			if suffix != nil {
				add(applySuffix(r, suffix[1]))
			}
		}
	}
	scanNumberWords(text, add)
}

func isNumberSep(r rune) bool { return r == '.' || r == ',' || r == '\'' || r == ' ' }

// splitRun splits a run of digits and single separators (numberRun) into
// its digit groups and the separator after each but the last.
func splitRun(run string) (groups []string, seps []byte) {
	start := 0
	for i := 0; i < len(run); i++ {
		if isNumberSep(rune(run[i])) {
			groups, seps = append(groups, run[start:i]), append(seps, run[i])
			start = i + 1
		}
	}
	return append(groups, run[start:]), seps
}

// applySuffix returns r as the suffix scales it: a percent as a fraction.
func applySuffix(r *big.Rat, suffix string) *big.Rat {
	switch suffix {
	case "%", "percent", "per cent":
		return new(big.Rat).Quo(r, big.NewRat(100, 1))
	}
	return new(big.Rat).Mul(r, big.NewRat(scales[suffix], 1))
}

// readings returns every value of a run (digits and separators) read as
// one number with "." as the decimal mark, or with ",": none when neither
// fits (groups of three after the first, one decimal mark, last).
func readings(run string) []*big.Rat {
	var out []*big.Rat
	for _, marks := range [][2]string{{".", ", '"}, {",", ". '"}} {
		if r, ok := readAs(run, marks[0], marks[1]); ok {
			out = append(out, r)
		}
	}
	return out
}

// readAs reads run with decimal mark dec and grouping marks group.
func readAs(run, dec, group string) (*big.Rat, bool) {
	intPart, frac, hasFrac := strings.Cut(run, dec)
	if hasFrac && (frac == "" || strings.ContainsAny(frac, dec+group)) {
		return nil, false
	}
	groups := strings.FieldsFunc(intPart, func(r rune) bool { return strings.ContainsRune(group, r) })
	if strings.ContainsAny(intPart, dec) || len(groups) == 0 {
		return nil, false
	}
	if len(groups) > 1 {
		if len(groups[0]) > 3 {
			return nil, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return nil, false
			}
		}
	}
	return decimalRat(strings.Join(groups, ""), frac), true
}

// digitsRat is a run of ASCII digits as a number.
func digitsRat(digits string) *big.Rat {
	r, _ := new(big.Rat).SetString(digits)
	if r == nil {
		return new(big.Rat)
	}
	return r
}

// decimalRat is intPart.frac as a number.
func decimalRat(intPart, frac string) *big.Rat {
	if frac == "" {
		return digitsRat(intPart)
	}
	return digitsRat(intPart + "." + frac)
}

// numberValue is a string value that is one number: an optional sign and
// currency (symbol or code) around one run of digits, with an optional
// percent or scale.
var numberValue = regexp.MustCompile(`^(?:[-+]|[$€£¥]|(?:usd|eur|gbp|chf|jpy|sek|nok|dkk|pln|cad|aud)\s?)*` +
	`(\d+(?:[.,' ]\d+)*)\s?(%|percent|k|thousand|m|mn|million|bn|b|billion)?(?:\s?(?:[$€£¥]|usd|eur|gbp|chf|jpy|sek|nok|dkk|pln|cad|aud))?$`)

// parseNumber returns every reading of n (normalised) when it is one
// number (numberValue); false otherwise.
func parseNumber(n string) ([]*big.Rat, bool) {
	m := numberValue.FindStringSubmatch(n)
	if m == nil {
		return nil, false
	}
	rs := readings(m[1])
	if m[2] != "" {
		for i, r := range rs {
			rs[i] = applySuffix(r, m[2])
		}
	}
	return rs, len(rs) > 0
}

// numberWords are the number words read as numbers; a unit after a ten
// ("twenty-five") adds up, a scale word after any multiplies.
var numberWords = map[string]int64{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
	"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
	"forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12, "hundred": 100}

var wordScales = map[string]int64{"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9}

// scanNumberWords calls add with the value of every number word of text,
// of every ten-and-unit pair and of every number word before a scale.
func scanNumberWords(text string, add func(*big.Rat)) {
	words := strings.FieldsFunc(text, func(r rune) bool { return r < 'a' || r > 'z' })
	for i, w := range words {
		v, ok := numberWords[w]
		if !ok {
			continue
		}
		add(big.NewRat(v, 1))
		if i+1 >= len(words) {
			continue
		}
		next := words[i+1]
		if u, ok := numberWords[next]; ok && v >= 20 && v%10 == 0 && u < 10 && u > 0 {
			add(big.NewRat(v+u, 1))
		}
		if sc, ok := wordScales[next]; ok {
			add(big.NewRat(v*sc, 1))
		}
	}
}
