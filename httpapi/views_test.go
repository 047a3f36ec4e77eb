package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/workflow"
)

// mirror is one domain type the API shows, converted by its view
// function. internal names the domain's JSON fields the API deliberately
// leaves out and derived the wire fields computed for it ("a.b" for a
// field of an object, "a[].b" of each object in an array).
type mirror struct {
	name              string
	domain            func() any // a value with every field set
	view              func(any) any
	internal, derived []string
}

func mirrors() []mirror {
	return []mirror{
		{name: "Workflow", domain: func() any { w := filled[workflow.Workflow](); return &w },
			view: func(v any) any { return viewWorkflow(v.(*workflow.Workflow)) },
			internal: []string{"version", "checkpoint", "traceContext", "queueEdits", "queuedRounds[].prompt",
				"queuedRounds[].documents[].workflowId", "queuedRounds[].documents[].messageId"},
			derived: []string{"queuedRounds[].round", "queuedRounds[].title"}},
		{name: "Message", domain: func() any { return filled[workflow.Message]() },
			view:     func(v any) any { return viewMessage(v.(workflow.Message)) },
			internal: []string{"workflowId", "documents[].workflowId", "documents[].messageId"}},
		{name: "PendingApproval", domain: func() any { p := filled[workflow.PendingApproval](); return &p },
			view: func(v any) any { return viewPending(v.(*workflow.PendingApproval)) }},
		{name: "StandingApproval", domain: func() any {
			a := filled[workflow.StandingApproval]()
			a.Kind, a.Constraints = workflow.ApprovalIntent, map[string]any{"priority": map[string]any{"maximum": 2.0}}
			return a
		}, view: func(v any) any { return viewStanding(v.(workflow.StandingApproval)) }, internal: []string{"userId"}},
		{name: "Checkpoint", domain: func() any {
			// the modes' own members, stored beside the common ones, show
			// in the view as they did while they were Checkpoint's fields
			mode := workflow.ModeState(`{"plan":[{"action":"a","parameters":{"k":"v"},"resultLabel":"r","documents":["d"],"connection":"c"}],` +
				`"planIndex":1,"replans":2,"compactionSkipped":true}`)
			c := filled[workflow.Checkpoint]()
			c.Mode = mode
			after := filled[workflow.Checkpoint]()
			after.Mode = mode
			after.AfterReject = &workflow.Checkpoint{Step: 9} // one level is all the view shows
			c.AfterReject = &after
			return &c
		}, view: func(v any) any { return viewCheckpoint(v.(*workflow.Checkpoint)) }, internal: []string{"afterReject.afterReject"}},
		{name: "Trace", domain: func() any { return filled[workflow.Trace]() },
			view: func(v any) any { return viewTrace(v.(workflow.Trace)) }, internal: []string{"inputs"}},
		{name: "AdminWorkflow", domain: func() any { w := filled[workflow.Workflow](); return &w },
			view: func(v any) any { return adminView(v.(*workflow.Workflow)) },
			internal: []string{"version", "queueEdits", "queuedRounds[].prompt",
				"queuedRounds[].documents[].workflowId", "queuedRounds[].documents[].messageId"},
			derived: []string{"queuedRounds[].round", "queuedRounds[].title"}},
		{name: "Experiment", domain: func() any { e := filled[experiments.Experiment](); return &e },
			view: func(v any) any { return viewExperiment(v.(*experiments.Experiment)) }},
	}
}

// TestWireMirrorsDomain converts each domain type the API shows, with
// every field set, and checks that its wire form carries every JSON field
// of the domain form with the same value, but the ones listed as internal;
// and nothing else but the derived ones. A field added to a domain type
// fails here until its wire type has it or it is listed as internal.
func TestWireMirrorsDomain(t *testing.T) {
	t.Parallel()
	for _, m := range mirrors() {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			in := m.domain()
			d, w := generic(t, in), generic(t, m.view(in))
			compareWire(t, "", d, w, m.internal, m.derived)
		})
	}
}

// compareWire reports where wire w differs from domain d at path.
func compareWire(t *testing.T, path string, d, w any, internal, derived []string) {
	t.Helper()
	at := func(k string) string { return strings.TrimPrefix(path+"."+k, ".") }
	switch d := d.(type) {
	case map[string]any:
		wm, ok := w.(map[string]any)
		if !ok {
			t.Errorf("%s: wire %v, want an object", path, w)
			return
		}
		for k, dv := range d {
			wv, has := wm[k]
			switch {
			case slices.Contains(internal, at(k)):
				if has {
					t.Errorf("%s: internal, but the wire form has it", at(k))
				}
			case !has:
				t.Errorf("%s: the domain type has it and its wire type does not: add it to the wire type, or list it as internal", at(k))
			default:
				compareWire(t, at(k), dv, wv, internal, derived)
			}
		}
		for k := range wm {
			if _, ok := d[k]; !ok && !slices.Contains(derived, at(k)) {
				t.Errorf("%s: the wire form has it and the domain form does not", at(k))
			}
		}
	case []any:
		wa, ok := w.([]any)
		if !ok || len(wa) != len(d) {
			t.Errorf("%s: wire %v, want %d items", path, w, len(d))
			return
		}
		for i := range d {
			compareWire(t, path+"[]", d[i], wa[i], internal, derived)
		}
	default:
		if !reflect.DeepEqual(d, w) {
			t.Errorf("%s: wire %v, domain %v", path, w, d)
		}
	}
}

// generic is v's JSON form as maps, slices and json.Numbers.
func generic(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// filled returns a T whose exported fields are all set, recursively (a
// field of a type already being filled stays zero).
func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem(), map[reflect.Type]bool{})
	return v
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	tableType = reflect.TypeFor[workflow.StageTable]()
	rawType   = reflect.TypeFor[json.RawMessage]()
)

func fill(v reflect.Value, open map[reflect.Type]bool) {
	switch t := v.Type(); {
	case t == timeType:
		v.Set(reflect.ValueOf(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)))
	case t == tableType:
		v.Set(reflect.ValueOf(workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
			workflow.StageOne: {Calls: 1, PromptTokens: 2, CompletionTokens: 3, CachedTokens: 4}})))
	case t == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"action":"a.b"}`)))
	case open[t]:
		return
	case t.Kind() == reflect.String:
		v.SetString("x")
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.CanInt():
		v.SetInt(3)
	case v.CanFloat():
		v.SetFloat(1.5)
	case t.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		open[t] = true
		fill(p.Elem(), open)
		delete(open, t)
		v.Set(p)
	case t.Kind() == reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		fill(s.Index(0), open)
		v.Set(s)
	case t.Kind() == reflect.Map:
		m := reflect.MakeMap(t)
		key, val := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fill(key, open)
		fill(val, open)
		m.SetMapIndex(key, val)
		v.Set(m)
	case t.Kind() == reflect.Struct:
		open[t] = true
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), open)
			}
		}
		delete(open, t)
	}
}
