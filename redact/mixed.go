package redact

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The fixed forms (Forms) catch what one encoder writes. A mixed form is
// what none of them is: the secret upper- or lower-cased (a normalising
// proxy), or JSON with only some characters \u-escaped (as .NET's encoder
// writes it), or HTML with some characters as entities. mixedMatcher finds
// those by decoding while it compares: at each position it reads the text
// one unit at a time, a unit being a character, a JSON escape (\uXXXX,
// surrogate pairs included, or \" \\ \/ \b \f \n \r \t), an HTML character
// reference (&#NN; &#xHH; &quot; &amp; &lt; &gt; &apos; &sol;) or a
// percent-encoded ASCII byte (%HH), and compares each decoded character
// with the secret's, ignoring case (Unicode simple folding). A match
// covers whole units, so replacing it keeps JSON and HTML well formed.

// mixedMatcher finds any secret in any mix of the units above.
//
// Looking at every byte of every text would make the redactor ten times
// slower than its fixed-form scan, so Contains splits the work: a secret
// spelled in plain ASCII letters of any case is found by a case-folding
// scanner (newFoldScanner), which skips bytes as the fixed-form one does;
// any other match holds an escape ('\\', '&', '%') or a non-ASCII byte,
// and starts at most maxLead bytes before the first one, so findEscaped
// tries only the positions in those windows. Replacing (rare: only text
// that holds a secret) tries every position (find).
type mixedMatcher struct {
	secrets [][]rune
	// maxLead bounds how far before its first escape or non-ASCII byte a
	// match may start: the literal units before it, at most 4 bytes each.
	maxLead int
	// nonASCII: some secret is not ASCII, so a non-ASCII byte may be part
	// of a match that holds no escape. When every secret is ASCII, case is
	// folded for ASCII letters only in Contains (the two non-ASCII
	// letters that fold to ASCII ones, ſ and the Kelvin sign, are found
	// only next to an escape).
	nonASCII bool
	// start marks the bytes a match can begin with: the first bytes of
	// every case variant of each secret's first character, and the bytes
	// that begin an escape.
	start [256]bool
}

func newMixedMatcher(secrets []string) *mixedMatcher {
	m := &mixedMatcher{}
	for _, s := range secrets {
		if s == "" || !utf8.ValidString(s) {
			continue
		}
		rs := []rune(s)
		m.secrets = append(m.secrets, rs)
		m.maxLead = max(m.maxLead, utf8.UTFMax*(len(rs)-1))
		m.nonASCII = m.nonASCII || len(rs) != len(s)
		r := rs[0]
		for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], f)
			m.start[b[0]] = true
			if f == r {
				break
			}
		}
	}
	if len(m.secrets) > 0 {
		m.start['\\'], m.start['&'], m.start['%'] = true, true, true
	}
	return m
}

// find returns the first match in s at or after from: its start and end.
func find[T string | []byte](m *mixedMatcher, s T, from int) (int, int, bool) {
	if m == nil || len(m.secrets) == 0 {
		return 0, 0, false
	}
	for i := from; i < len(s); i++ {
		if end := matchStart(m, s, i); end > 0 {
			return i, end, true
		}
	}
	return 0, 0, false
}

// matchStart returns where a secret starting at i of s ends, or -1. The
// first unit is decoded once for all secrets.
func matchStart[T string | []byte](m *mixedMatcher, s T, i int) int {
	if !m.start[s[i]] {
		return -1
	}
	r, n := unit(s, i)
	for _, sec := range m.secrets {
		if sameFolded(r, sec[0]) {
			if end := matchAt(s, i+n, sec[1:]); end > 0 {
				return end
			}
		}
	}
	return -1
}

// triggers are the bytes one of which every match that is not plain ASCII
// holds (besides non-ASCII bytes).
const triggers = "\\&%"

// containsEscaped reports whether s holds a match with an escape or a
// non-ASCII byte (see mixedMatcher). index finds a byte in s from a
// position (strings.IndexByte or bytes.IndexByte, offset).
func containsEscaped[T string | []byte](m *mixedMatcher, s T, index func(c byte, from int) int) bool {
	if m == nil || len(m.secrets) == 0 {
		return false
	}
	var next [len(triggers) + 1]int // next trigger of each kind at or after cur
	for k := range next {
		next[k] = -1
	}
	tried, cur := 0, 0
	for {
		e := len(s)
		for k := range next {
			if next[k] < cur {
				if k < len(triggers) {
					if next[k] = index(triggers[k], cur); next[k] < 0 {
						next[k] = len(s)
					}
				} else if next[k] = len(s); m.nonASCII {
					next[k] = nonASCII(s, cur)
				}
			}
			e = min(e, next[k])
		}
		if e >= len(s) {
			return false
		}
		for p := max(tried, e-m.maxLead); p <= e; p++ {
			if m.start[s[p]] && matchStart(m, s, p) > 0 {
				return true
			}
		}
		tried, cur = e+1, e+1
	}
}

// nonASCII is the index of the first byte of s from i that is not ASCII,
// len(s) when none; it reads eight bytes at a time.
func nonASCII[T string | []byte](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// replace returns s with every match replaced by Redacted, and whether it
// found one.
func (m *mixedMatcher) replace(s string) (string, bool) {
	if m == nil {
		return s, false
	}
	i, end, ok := find(m, s, 0)
	if !ok {
		return s, false
	}
	var b strings.Builder
	last := 0
	for ok {
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		last = end
		i, end, ok = find(m, s, end)
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// matchAt returns where secret ends when the units of s from i spell it,
// else -1.
func matchAt[T string | []byte](s T, i int, secret []rune) int {
	for _, want := range secret {
		r, n := unit(s, i)
		if n == 0 || !sameFolded(r, want) {
			return -1
		}
		i += n
	}
	return i
}

// sameFolded reports whether a and b are one letter in two cases
// (Unicode simple folding), or equal.
func sameFolded(a, b rune) bool {
	if a == b {
		return true
	}
	switch asciiA, asciiB := a < utf8.RuneSelf, b < utf8.RuneSelf; {
	case asciiA && asciiB:
		return lowerByte(byte(a)) == lowerByte(byte(b))
	case asciiA != asciiB:
		// Only s and k share a fold with non-ASCII letters: ſ, K.
		if asciiA {
			a, b = b, a
		}
		l := lowerByte(byte(b))
		return a == 'ſ' && l == 's' || a == '\u212A' && l == 'k'
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// unit decodes the unit of s at i: its character and its length in bytes
// (0 at the end of s).
func unit[T string | []byte](s T, i int) (rune, int) {
	if i >= len(s) {
		return 0, 0
	}
	switch s[i] {
	case '\\':
		if r, n := nestedEscape(s, i); n > 0 {
			if r == '&' { // an HTML reference inside JSON: \u0026#x63;
				if r2, n2 := htmlReference(s, i+n); n2 > 0 {
					return r2, n + n2
				}
			}
			return r, n
		}
	case '&':
		if r, n := htmlReference(s, i+1); n > 0 {
			return r, 1 + n
		}
	case '%':
		if v, ok := hexAt(s, i+1, 2); ok && v < utf8.RuneSelf {
			return v, 3
		}
	}
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), 1
	}
	var b [utf8.UTFMax]byte
	k := copy(b[:], s[i:min(len(s), i+utf8.UTFMax)])
	return utf8.DecodeRune(b[:k])
}

// nestedEscape decodes the JSON escape at s[i] == '\\', also when the
// JSON was encoded again (a log line holding an upstream's JSON): a run
// of backslashes before an escape's letter is one escape at a deeper
// level (\\u006E, \\\"), standing for its character. A run before
// anything else is an escaped backslash.
func nestedEscape[T string | []byte](s T, i int) (rune, int) {
	j := i
	for j < len(s) && s[j] == '\\' {
		j++
	}
	if j-i >= 2 && j < len(s) {
		if r, n := jsonEscape(s, j-1); n > 0 {
			return r, j - 1 - i + n
		}
	}
	return jsonEscape(s, i)
}

// jsonEscape decodes the JSON escape at s[i] == '\\' (0 when it is none).
func jsonEscape[T string | []byte](s T, i int) (rune, int) {
	if i+1 >= len(s) {
		return 0, 0
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return rune(c), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hexAt(s, i+2, 4)
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) {
			if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if r2, ok := hexAt(s, i+8, 4); ok {
					if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
						return c, 12
					}
				}
			}
			return 0, 0
		}
		return r, 6
	}
	return 0, 0
}

// hexAt reads n hex digits (either case) of s from i.
func hexAt[T string | []byte](s T, i, n int) (rune, bool) {
	if i+n > len(s) {
		return 0, false
	}
	var v rune
	for k := range n {
		d, ok := hexDigit(s[i+k])
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// namedReference is the character an HTML named reference an encoder
// writes for an ASCII character stands for (0: not one of them).
func namedReference(name string) rune {
	switch name {
	case "quot":
		return '"'
	case "amp":
		return '&'
	case "lt":
		return '<'
	case "gt":
		return '>'
	case "apos":
		return '\''
	case "sol":
		return '/'
	case "plus":
		return '+'
	case "equals":
		return '='
	case "colon":
		return ':'
	case "num":
		return '#'
	case "percnt":
		return '%'
	case "lowbar":
		return '_'
	case "hyphen", "dash":
		return '-'
	case "period":
		return '.'
	case "comma":
		return ','
	}
	return 0
}

// htmlReference decodes the character reference whose '&' is just before
// s[i] (0 when it is none): #NN; #xHH; or a namedReference, ';'
// required. The length excludes the '&'.
func htmlReference[T string | []byte](s T, i int) (rune, int) {
	window := string(s[i:min(len(s), i+11)])
	end := strings.IndexByte(window, ';')
	if end < 1 {
		return 0, 0
	}
	body := window[:end]
	if body[0] != '#' {
		if r := namedReference(body); r != 0 {
			return r, end + 1
		}
		return 0, 0
	}
	digits, base := body[1:], 10
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		digits, base = digits[1:], 16
	}
	if digits == "" || len(digits) > 7 {
		return 0, 0
	}
	var v rune
	for i := 0; i < len(digits); i++ {
		d, ok := hexDigit(digits[i])
		if !ok || int(d) >= base {
			return 0, 0
		}
		v = v*rune(base) + d
	}
	if v > unicode.MaxRune {
		return 0, 0
	}
	return v, end + 1
}
