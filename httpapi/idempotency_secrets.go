package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
)

// withoutSecrets returns body, an answer kept for replay, with the
// top-level members named in idemSecretMembers cut out; the other members
// stay byte for byte, in their order. A body that is not a JSON object is
// returned as it is (no answer puts a secret anywhere else).
func withoutSecrets(body []byte) []byte {
	if !slices.ContainsFunc(idemSecretMembers, func(m string) bool { return bytes.Contains(body, []byte(m)) }) {
		return body
	}
	cuts, ok := secretSpans(body)
	if !ok || len(cuts) == 0 {
		return body
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, c := range cuts {
		out = append(out, body[last:c[0]]...)
		last = c[1]
	}
	return append(out, body[last:]...)
}

// secretSpans returns the byte ranges of body's top-level secret members,
// each with the comma that separates it from its neighbour, so what is
// left is still one JSON object.
func secretSpans(body []byte) ([][2]int, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var cuts [][2]int
	first, cut := true, 0
	for dec.More() {
		start := max(int(dec.InputOffset()), cut) // just after '{', the last value or the last cut
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		end := int(dec.InputOffset())
		if slices.Contains(idemSecretMembers, key) {
			if first {
				// The first member: take the comma after it instead.
				end = afterComma(body, end)
			}
			cuts, cut = append(cuts, [2]int{start, end}), end
			continue
		}
		first = false
	}
	return cuts, true
}

// afterComma returns the offset just past the comma that follows body[i:]'s
// white space, or i when none does.
func afterComma(body []byte, i int) int {
	j := i
	for j < len(body) && (body[j] == ' ' || body[j] == '\n' || body[j] == '\t' || body[j] == '\r') {
		j++
	}
	if j < len(body) && body[j] == ',' {
		return j + 1
	}
	return i
}
