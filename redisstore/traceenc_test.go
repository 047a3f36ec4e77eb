package redisstore

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// marshalOf is json.Marshal's encoding of v.
func marshalOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filled returns a Trace with every field set to a value that is not its
// zero value, found by reflection: a field added to Trace later is set
// too, so an encoder that does not write it fails the comparison.
func filled(t *testing.T) workflow.Trace {
	var tr workflow.Trace
	v := reflect.ValueOf(&tr).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Date(2026, 11, 26, 10, 7, 39, 520008517, time.FixedZone("X", 5400))))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(`{"action":"a.b","n":[1,-2.5e3,true,null,"x\"y\u00e9"]}`)))
		case f.Type() == reflect.TypeFor[[]workflow.PromptMessage]():
			f.Set(reflect.ValueOf([]workflow.PromptMessage{{Role: "system", Content: "rules <b> & \"q\"\n"}, {Role: "user", Content: name}}))
		case f.Type() == reflect.TypeFor[map[string]string]():
			f.Set(reflect.ValueOf(map[string]string{"USER_PROMPT": "say <hi> & \u2028", "A\xff": name, "": "\xfe"}))
		case f.Kind() == reflect.String:
			f.SetString(name + " <&> \u2028 \xff é\t")
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{name, "lines[1].sku <&> \u2028 \xff"}))
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(-7 - i))
		default:
			t.Fatalf("Trace.%s has type %s, which this test does not fill: teach it (and appendTrace) the type", name, f.Type())
		}
	}
	return tr
}

// TestAppendTraceIsMarshal holds appendTrace's bytes equal to
// json.Marshal's, and holds that it declines (for encoding/json to
// decide) exactly what it cannot write as Marshal does.
func TestAppendTraceIsMarshal(t *testing.T) {
	full := filled(t)
	zero := workflow.Trace{}
	emptyPrompt := workflow.Trace{ID: "t", Prompt: []workflow.PromptMessage{}, Parsed: json.RawMessage{}}
	long := workflow.Trace{ID: "t", Prompt: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("a line of <prompt> text \"quoted\"\n", 300)}},
		CreatedAt: time.Now()}
	for name, tr := range map[string]workflow.Trace{"every field": full, "zero": zero, "empty prompt and parsed": emptyPrompt, "long prompt": long} {
		for sighting := range 3 { // the long prompt's third is a cache hit
			got, ok := appendTrace([]byte("prefix"), &tr)
			if !ok {
				t.Errorf("%s: appendTrace declined", name)
				break
			}
			if want := "prefix" + marshalOf(t, tr); string(got) != want {
				t.Errorf("%s, sighting %d:\n got %s\nwant %s", name, sighting, got, want)
			}
		}
	}
	// Declined: Marshal would change the Parsed bytes, or refuse them or
	// the time. encodeWith then gives encoding/json's bytes, or its error.
	for name, change := range map[string]func(*workflow.Trace){
		"parsed with spaces":  func(tr *workflow.Trace) { tr.Parsed = json.RawMessage(`{"a": 1}`) },
		"parsed with <":       func(tr *workflow.Trace) { tr.Parsed = json.RawMessage(`{"a":"<b>"}`) },
		"parsed with U+2028":  func(tr *workflow.Trace) { tr.Parsed = json.RawMessage("\"a\u2028\"") },
		"parsed invalid":      func(tr *workflow.Trace) { tr.Parsed = json.RawMessage(`{"a":}`) },
		"parsed two values":   func(tr *workflow.Trace) { tr.Parsed = json.RawMessage(`1 2`) },
		"time past year 9999": func(tr *workflow.Trace) { tr.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		tr := full
		change(&tr)
		checkDecline(t, name, &tr, appendTrace)
	}
}

// FuzzAppendTrace compares appendTrace with json.Marshal on traces with
// fuzzed strings, numbers and Parsed bytes.
func FuzzAppendTrace(f *testing.F) {
	f.Add("stage1", "You are <the> planner\n\"rules\"", `{"action":"x","l":["a"]}`, 3, int64(17))
	f.Add("\xff\xfe", "\u2028\u2029\x00\x1f\x7f", `[1,2.5,-0e+7,"\u00e9\/"]`, -1, int64(-5))
	f.Add("", "", ``, 0, int64(0))
	f.Add("a", "b", ` {"a":1}`, 1, int64(1))
	f.Fuzz(func(t *testing.T, s1, s2, parsed string, n int, m int64) {
		tr := workflow.Trace{ID: s1, WorkflowID: s2, Round: n, Step: -n, Stage: workflow.Stage(s2), Attempt: n,
			Template: s1, Prompt: []workflow.PromptMessage{{Role: s1, Content: s2}, {Role: s2, Content: s1 + s2}},
			Response: s2, Parsed: json.RawMessage(parsed), Error: s1, Model: s2, PromptTokens: n,
			CompletionTokens: n, LatencyMs: m, FinishReason: s1, Retries: n, OutputMode: workflow.OutputMode(s2),
			CreatedAt: time.Unix(m%(1<<33), m%1e9).UTC()}
		want, err := json.Marshal(tr)
		got, ok := appendTrace(nil, &tr)
		switch {
		case ok && err != nil:
			t.Fatalf("appendTrace wrote %q; json.Marshal fails: %v", got, err)
		case ok && !bytes.Equal(got, want):
			t.Fatalf("appendTrace\n got %s\nwant %s", got, want)
		case !ok && err == nil && jsonform.CompactAsIs(tr.Parsed) && tr.CreatedAt.Year() <= 9999:
			t.Fatalf("appendTrace declined a trace it can write: %+v", tr)
		}
	})
}

// BenchmarkEncodeTrace compares appendTrace with encoding/json on Stage 1
// traces the size of the side-by-side bench's: the same system message,
// a user message that differs from call to call.
func BenchmarkEncodeTrace(b *testing.B) {
	system := strings.Repeat("You are the planner. Reply with \"one\" JSON object <only>.\n", 40)
	users := make([]string, 4096) // no user message repeats within 4096 calls
	for i := range users {
		users[i] = strings.Repeat("- [round 1, step 1] action text.echo: success\n  summary: ok\n", 30) + strings.Repeat("x", i)
	}
	parsed := json.RawMessage(`{"action":"text.echo","actionObjective":"echo it","learnings":["l"],"parametersContext":"c","parametersSchema":{"fields":[{"name":"text","type":"string","required":true}]},"requiredConnection":null,"requiredInputDocuments":[]}`)
	tr := workflow.Trace{ID: "tr_01m8bn6e008fggp2nd97v07zt9", WorkflowID: "wf_01m8bn6dzv8e8yqs43thdat2hr", Round: 1, Step: 2,
		Stage: workflow.StageOne, Attempt: 1, Template: "stage1", Prompt: []workflow.PromptMessage{{Role: "system", Content: system}, {Role: "user"}},
		Response: string(parsed), Parsed: parsed, Model: "fake", PromptTokens: 100, CompletionTokens: 10, OutputMode: workflow.OutputText, CreatedAt: time.Now()}
	b.Run("appendTrace", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			tr.Prompt[1].Content = users[i%len(users)]
			buf, _ = appendTrace(buf[:0], &tr)
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("json.Encoder", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			tr.Prompt[1].Content = users[i%len(users)]
			buf.Reset()
			if err := enc.Encode(&tr); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
}

// TestEncCacheGivesTheEncoding holds the cache's bytes equal to
// jsonform.AppendString's on the first, second and later sightings of a string,
// with slots shared by other strings, and holds that a string seen twice
// in a row is then served from the cache.
func TestEncCacheGivesTheEncoding(t *testing.T) {
	var c encCache
	long := strings.Repeat("rules <b>&\"q\"\n\xff\u2028 ", 100)
	strs := []string{long, "short", strings.Repeat("x", minCached), strings.Repeat("y", maxCached+1), long + "!"}
	for range encCacheSlots + 3 { // enough strings to share slots
		strs = append(strs, long+strings.Repeat("z", len(strs)))
	}
	for round := range 4 {
		for _, s := range strs {
			want := string(jsonform.AppendString([]byte("p"), s))
			if got := string(c.appendString([]byte("p"), s)); got != want {
				t.Fatalf("round %d: appendString(%.20q...) = %.40q..., want %.40q...", round, s, got, want)
			}
		}
	}
	// Missed twice in a row by its slot: cached, and kept while other
	// strings pass through the slot once each.
	slot := func(s string) *encEntry { return &c.slots[maphash.String(encSeed, s)%encCacheSlots] }
	c.appendString(nil, long)
	c.appendString(nil, long)
	if slot(long).s != long {
		t.Fatalf("a long string seen twice is not cached")
	}
	var others []string
	for i := 0; len(others) < 3; i++ {
		if o := long + strconv.Itoa(i); slot(o) == slot(long) {
			others = append(others, o)
		}
	}
	for _, o := range others {
		if got, want := string(c.appendString(nil, o)), string(jsonform.AppendString(nil, o)); got != want {
			t.Fatalf("appendString(other) = %.40q..., want %.40q...", got, want)
		}
		if slot(long).s != long {
			t.Fatalf("a string seen once displaced the cached one")
		}
	}
	c.appendString(nil, others[0])
	c.appendString(nil, others[0])
	if slot(long).s != others[0] {
		t.Errorf("a string missed twice in a row did not take the slot")
	}
	if e := c.slots[maphash.String(encSeed, "short")%encCacheSlots]; e.s == "short" {
		t.Errorf("a short string is cached")
	}
	controls := strings.Repeat("\x01", maxCached) // escaped six times as long
	for range 3 {
		if got, want := string(c.appendString(nil, controls)), string(jsonform.AppendString(nil, controls)); got != want {
			t.Fatalf("appendString(controls) differs from jsonform.AppendString")
		}
	}
	if slot(controls).s == controls {
		t.Errorf("a string whose encoding is past 2 × maxCached is cached")
	}
}
