package jsonform_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow/jsonform"
)

// encodeCases are parameter maps with every kind of value AppendParams
// writes itself and every kind it leaves to json.Marshal.
var encodeCases = map[string]map[string]any{
	"nil":          nil,
	"empty":        {},
	"plain":        {"text": "hello", "n": 2.5, "ok": true, "none": nil},
	"sorted keys":  {"b": 1.0, "a": 2.0, "B": 3.0, "": 4.0, "aa": 5.0, "é": 6.0, "z\xff": 7.0},
	"escaped keys": {"<key>": "v", "a&b": "v", "quo\"te": "v", "new\nline": "v", "bad\xffkey": "v", "\u2028": "v"},
	"strings": {
		"html": "<b>&</b>", "quote": `say "hi" \ bye`, "controls": "\x00\x01\b\f\n\r\t\x1f\x7f", "unicode": "héllo ✓ 日本 🙂",
		"invalid": "a\xffb\xc0\x80", "separators": "a\u2028b\u2029c", "empty": "",
	},
	"floats": {
		"zero": 0.0, "negzero": math.Copysign(0, -1), "int": 42.0, "neg": -7.0, "frac": 0.1, "big": 1e20, "bigger": 1e21,
		"huge": 1.7976931348623157e308, "small": 1e-6, "smaller": 1e-7, "tiny": 5e-324, "neg small": -1.5e-9, "precise": 1.0000000000000002,
	},
	"nested": {
		"obj":     map[string]any{"z": []any{1.0, "x", nil, true, map[string]any{}, []any{}}, "a": map[string]any{"deep": "<"}},
		"nilList": []any(nil), "nilMap": map[string]any(nil), "emptyList": []any{},
	},
	"other types": {
		"int": 7, "int64": int64(-3), "number": json.Number("12.50"), "typed": []string{"a", "<"}, "struct": struct{ A int }{1},
		"float32": float32(0.1), "strmap": map[string]string{"b": "1", "a": "2"}, "raw": json.RawMessage(`{"x" : 1}`),
		"list of others": []any{1, uint8(2), map[string]int{"k": 1}},
	},
	"many keys": func() map[string]any {
		m := map[string]any{}
		for i := range 40 {
			m[strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune('0'+i/26))] = float64(i)
		}
		return m
	}(),
}

func TestAppendParamsIsMarshal(t *testing.T) {
	for name, m := range encodeCases {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		got, err := jsonform.AppendParams([]byte("prefix"), m)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s:\n got %s (%v)\nwant prefix%s", name, got, err, want)
		}
	}
}

func TestAppendParamsFailsWhereMarshalFails(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for name, m := range map[string]map[string]any{
		"NaN":            {"x": math.NaN()},
		"Inf nested":     {"a": []any{1.0, map[string]any{"b": math.Inf(-1)}}},
		"channel":        {"c": make(chan int)},
		"cycle":          cyclic,
		"float32 NaN":    {"f": float32(math.NaN())},
		"after good one": {"a": "fine", "z": math.Inf(1)},
	} {
		if _, err := json.Marshal(m); err == nil {
			t.Fatalf("%s: Marshal did not fail", name)
		}
		if _, err := jsonform.AppendParams(nil, m); err == nil {
			t.Errorf("%s: AppendParams did not fail", name)
		}
	}
}

func FuzzAppendParams(f *testing.F) {
	for _, m := range encodeCases {
		if b, err := json.Marshal(m); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"a":"\u2028<>&\"\\\u0000","b":[1e-7,1e21,-0,0.000001,123456789012345678901234]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var m map[string]any
		if json.Unmarshal(doc, &m) != nil {
			return
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonform.AppendParams(nil, m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v), want %s", got, err, want)
		}
	})
}

// FuzzAppendParamsValues gives AppendParams strings with any bytes (keys
// and values) and any float64, which decoded JSON never holds.
func FuzzAppendParamsValues(f *testing.F) {
	f.Add("a\xffb<\u2028", 1e21)
	f.Add("", math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, s string, x float64) {
		m := map[string]any{s: s, "x": x, "list": []any{s, x}}
		want, werr := json.Marshal(m)
		got, gerr := jsonform.AppendParams(nil, m)
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v), want %s (%v)", got, gerr, want, werr)
		}
	})
}

func TestMarshalParamsIsMarshal(t *testing.T) {
	for name, m := range encodeCases {
		want, _ := json.Marshal(m)
		if got, err := jsonform.MarshalParams(m); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", name, got, err, want)
		}
	}
	plain := encodeCases["plain"]
	if got, _ := jsonform.MarshalParams(plain); cap(got) < len(got) || cap(got) > 2*len(got) {
		t.Errorf("%d bytes in a buffer of %d, want one sized for them", len(got), cap(got))
	}
}

// FuzzAppendString compares AppendString with json.Marshal.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f", "\\/", "é☃\U0001F600",
		"\u2028\u2029", "\xff", "\xe2\x80", "a\xe2\x80\xa8b", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonform.AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	})
}
