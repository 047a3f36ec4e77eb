package prompts

import (
	"maps"
	"math/big"
	"slices"
)

// SameValue reports whether got equals want as grounding normalises values
// (Ungrounded): strings lower-cased with dashes, quotes and whitespace
// folded; numbers by value, written as JSON numbers or as text in any
// common form ("1,250.50", "$1,250.5", "12 %" against 12); dates by the
// calendar day in any common form ("2024-03-05" against "5 March 2024"),
// with the time of day when both give one. A numeric date form readable
// two ways equals either reading. Objects equal with the same keys and
// equal members, lists with equal items in order; booleans and nulls
// only themselves. It is pure and never panics.
func SameValue(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if gv, ok := g[k]; !ok || !SameValue(gv, w[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		return ok && len(g) == len(w) && sameItems(g, w)
	case bool, nil:
		return got == want
	}
	return sameScalar(got, want)
}

// sameItems compares two lists of equal length item by item.
func sameItems(g, w []any) bool {
	for i := range w {
		if !SameValue(g[i], w[i]) {
			return false
		}
	}
	return true
}

// sameScalar compares a string or number with a string or number.
func sameScalar(got, want any) bool {
	gs, gText := got.(string)
	ws, wText := want.(string)
	if gText && wText && normText(gs) == normText(ws) {
		return true
	}
	gn, gok := numbersOf(got)
	wn, wok := numbersOf(want)
	if gok && wok {
		for _, a := range gn {
			for _, b := range wn {
				if a.Cmp(b) == 0 {
					return true
				}
			}
		}
		return false
	}
	if gText && wText {
		return sameDate(normText(gs), normText(ws))
	}
	return false
}

// numbersOf returns the readings of a JSON number, or of a string that is
// one number in a common form.
func numbersOf(v any) ([]*big.Rat, bool) {
	if r, ok := numberOf(v); ok {
		return []*big.Rat{r}, true
	}
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	return parseNumber(normText(s))
}

// sameDate reports whether the normalised texts a and b are dates with a
// reading in common and the same time of day (when both give one).
func sameDate(a, b string) bool {
	ad, am, aok := parseDateValue(a)
	bd, bm, bok := parseDateValue(b)
	if !aok || !bok || (am >= 0 && bm >= 0 && am != bm) {
		return false
	}
	for _, x := range ad {
		if slices.Contains(bd, x) {
			return true
		}
	}
	return false
}
