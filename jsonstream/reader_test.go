package jsonstream_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/jsonstream"
)

// record feeds text in the given piece sizes and returns the members
// reported (key → raw) in order, and each path's pieces joined.
func record(t *testing.T, text string, sizes func() int) (keys []string, raws map[string]string, strs map[string]string, pieces int) {
	t.Helper()
	raws, strs = map[string]string{}, map[string]string{}
	r := &jsonstream.Reader{
		OnMember: func(key string, raw []byte) { keys = append(keys, key); raws[key] = string(raw) },
		OnString: func(path, piece string) {
			if !utf8.ValidString(piece) {
				t.Errorf("piece %q of %s splits a UTF-8 sequence", piece, path)
			}
			strs[path] += piece
			pieces++
		},
	}
	for rest := text; rest != ""; {
		n := min(sizes(), len(rest))
		r.WriteString(rest[:n])
		rest = rest[n:]
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if !r.Done() {
		t.Fatal("the object was not read to its end")
	}
	return keys, raws, strs, pieces
}

const reply = "Here it is:\n```json\n" + `{"actionObjective": "Say h\u00e9llo \ud83d\ude00 \"x\"\\n ünïcode",
 "action":"workflow.complete", "parametersContext": "", "n": -1.5e3, "b": true, "z": null,
 "parametersSchema": {"fields": [{"name": "message", "required": false}]},
 "learnings": ["a", "b\tc"], "parameters": {"message": "hi"}, "e": {}, "f": []}` + "\n```"

func TestReaderReportsMembersAndStringsWhateverThePieces(t *testing.T) {
	var want map[string]json.RawMessage
	obj := reply[strings.Index(reply, "{") : strings.LastIndex(reply, "}")+1]
	if err := json.Unmarshal([]byte(obj), &want); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		ActionObjective string
		Learnings       []string
		Parameters      struct{ Message string }
	}
	json.Unmarshal([]byte(obj), &decoded)
	wantKeys := []string{"actionObjective", "action", "parametersContext", "n", "b", "z", "parametersSchema", "learnings", "parameters", "e", "f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, sizes := range map[string]func() int{
		"byte by byte": func() int { return 1 },
		"random":       func() int { return 1 + rng.IntN(7) },
		"whole":        func() int { return len(reply) },
	} {
		t.Run(name, func(t *testing.T) {
			keys, raws, strs, _ := record(t, reply, sizes)
			if !reflect.DeepEqual(keys, wantKeys) {
				t.Fatalf("keys %v, want %v", keys, wantKeys)
			}
			for k, raw := range want {
				var a, b any
				json.Unmarshal(raw, &a)
				if err := json.Unmarshal([]byte(raws[k]), &b); err != nil || !reflect.DeepEqual(a, b) {
					t.Errorf("member %s: raw %q, want %s (%v)", k, raws[k], raw, err)
				}
			}
			if strs["actionObjective"] != decoded.ActionObjective {
				t.Errorf("actionObjective pieces %q, want %q", strs["actionObjective"], decoded.ActionObjective)
			}
			if strs["parameters.message"] != "hi" || strs["learnings[]"] != "ab\tc" {
				t.Errorf("nested pieces %q", strs)
			}
		})
	}
}

func TestReaderHandsOverAStringBeforeItEnds(t *testing.T) {
	var got []string
	r := &jsonstream.Reader{OnString: func(_, p string) { got = append(got, p) }}
	r.WriteString(`{"message": "Hel`)
	r.WriteString("lo w\xc3") // half of "é"
	r.WriteString("\xa9rld")
	if want := []string{"Hel", "lo w", "érld"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pieces %q, want %q", got, want)
	}
	if r.Done() {
		t.Fatal("done before the object closed")
	}
}

func TestReaderMemberCompleteOnlyOnceItsValueEnds(t *testing.T) {
	var keys []string
	r := &jsonstream.Reader{OnMember: func(k string, _ []byte) { keys = append(keys, k) }}
	r.WriteString(`{"a": 12`)
	if len(keys) != 0 {
		t.Fatalf("a number reported before its end: %v", keys)
	}
	r.WriteString(`, "s": {"x": [1, {"y": "}"}]`)
	if !reflect.DeepEqual(keys, []string{"a"}) {
		t.Fatalf("keys %v, want [a]", keys)
	}
	r.WriteString(`}`)
	if !reflect.DeepEqual(keys, []string{"a", "s"}) {
		t.Fatalf("keys %v, want [a s]", keys)
	}
}

func TestReaderStopsOnMalformedText(t *testing.T) {
	for _, text := range []string{`{"a" 1}`, `{"a": 1 "b": 2}`, `{1: 2}`, `{"a": ]}`} {
		r := &jsonstream.Reader{}
		r.WriteString(text)
		if r.Err() == nil || r.Done() {
			t.Errorf("%s: no error", text)
		}
	}
}
