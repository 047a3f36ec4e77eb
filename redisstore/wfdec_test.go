package redisstore

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// checkParse holds parseWorkflow to its promise on b: when it accepts b,
// json.Unmarshal decodes b without error into a deeply equal workflow,
// and decodeWorkflow gives what Unmarshal gives either way.
func checkParse(t *testing.T, b []byte) (accepted bool) {
	t.Helper()
	got, ok := parseWorkflow(b)
	var want workflow.Workflow
	err := json.Unmarshal(b, &want)
	switch {
	case ok && err != nil:
		t.Fatalf("parseWorkflow accepts %q, which json.Unmarshal refuses: %v", b, err)
	case ok && !reflect.DeepEqual(got, &want):
		t.Fatalf("parseWorkflow(%q)\n = %+v\nwant %+v", b, got, &want)
	}
	dec, decErr := decodeWorkflow(b)
	switch {
	case (decErr != nil) != (err != nil):
		t.Fatalf("decodeWorkflow(%q) error %v, json.Unmarshal's %v", b, decErr, err)
	case err == nil && !reflect.DeepEqual(dec, &want):
		t.Fatalf("decodeWorkflow(%q)\n = %+v\nwant %+v", b, dec, &want)
	}
	return ok
}

// TestParseWorkflowLeavesTheRest holds that parseWorkflow declines input
// in any form but appendWorkflow's (it also reads escapes Marshal does not
// write, and an empty plan), and that decodeWorkflow then gives
// json.Unmarshal's reading (or error).
func TestParseWorkflowLeavesTheRest(t *testing.T) {
	wf, _ := midRound()
	b := marshalOf(t, wf)
	if !checkParse(t, []byte(b)) {
		t.Fatalf("parseWorkflow declined appendWorkflow's form %s", b)
	}
	for name, s := range map[string]string{
		"space":                strings.Replace(b, `"userId":`, `"userId": `, 1),
		"trailing newline":     b + "\n",
		"other case":           strings.Replace(b, `"userId":`, `"UserID":`, 1),
		"unknown field":        strings.Replace(b, `{"id":`, `{"later":1,"id":`, 1),
		"duplicate key":        strings.Replace(b, `,"userId":`, `,"id":"x","userId":`, 1),
		"reordered":            `{"userId":"u","id":"x"}`,
		"surrogate pair":       strings.Replace(b, `"title":"`, `"title":"\ud83d\ude00`, 1),
		"lone surrogate":       strings.Replace(b, `"title":"`, `"title":"\ud83d`, 1),
		"invalid UTF-8":        strings.Replace(b, `"title":"`, "\"title\":\"\xff", 1),
		"control byte":         strings.Replace(b, `"title":"`, "\"title\":\"\x01", 1),
		"bad escape":           strings.Replace(b, `"title":"`, `"title":"\x`, 1),
		"float round":          strings.Replace(b, `"round":1`, `"round":1.0`, 1),
		"exponent round":       strings.Replace(b, `"round":1`, `"round":1e0`, 1),
		"leading zero":         strings.Replace(b, `"round":1`, `"round":01`, 1),
		"overflow":             strings.Replace(b, `"version":12`, `"version":9223372036854775808`, 1),
		"null time":            strings.Replace(b, `"createdAt":"2026-11-26T10:07:39.520008517Z"`, `"createdAt":null`, 1),
		"bad time":             strings.Replace(b, `"createdAt":"2026-11-26T10:07:39.520008517Z"`, `"createdAt":"yesterday"`, 1),
		"params not an object": strings.Replace(b, `"parameters":{`, `"parameters":[{`, 1),
		"null stage table":     strings.Replace(b, `"byStage":{`, `"byStage":null,"x":{`, 1),
		"truncated":            b[:len(b)-1],
		"escaped title":        strings.Replace(b, `"title":"`, `"title":"\u003cb\u003e \"q\" \\ \/ \b\f\n\r\t \u00e9\u2028`, 1),
		"empty plan":           strings.Replace(b, `"failures":0`, `"failures":0,"plan":[]`, 1),
		"before cachedTokens":  regexp.MustCompile(`,"cachedTokens":-?\d+`).ReplaceAllString(b, ""),
		"empty":                "",
		"null":                 "null",
	} {
		accepted := checkParse(t, []byte(s))
		if accepted != (name == "escaped title" || name == "empty plan" || name == "before cachedTokens") {
			t.Errorf("%s: parseWorkflow accepted = %v", name, accepted)
		}
	}
}

// FuzzParseWorkflow holds parseWorkflow to its promise on arbitrary
// input, from seeds in appendWorkflow's form.
func FuzzParseWorkflow(f *testing.F) {
	for _, w := range workflowCases() {
		if b, err := json.Marshal(w); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkParse(t, b) })
}

// BenchmarkDecodeWorkflow compares parseWorkflow with json.Unmarshal on
// the mid-round workflow's state.
func BenchmarkDecodeWorkflow(b *testing.B) {
	wf, _ := midRound()
	state, err := json.Marshal(wf)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parseWorkflow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := parseWorkflow(state); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var w workflow.Workflow
			if err := json.Unmarshal(state, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
