package redisstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// filler sets every field of a value to one that is not its zero value,
// found by reflection: a field added later to Workflow, Checkpoint,
// Selection, Stats, PendingApproval, Message or any type they hold is set
// too, so an encoder that does not write it fails the comparison with
// json.Marshal. It is deterministic: two fills give equal values.
type filler struct {
	t *testing.T
	n int // makes numbers and times differ from field to field
}

// maxFillDepth is the number of pointers fill follows (a checkpoint's
// AfterReject holds a checkpoint).
const maxFillDepth = 3

func (f *filler) fill(v reflect.Value, path string, depth int) {
	f.n++
	switch t := v.Type(); {
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 26, 10, 7, f.n, 520008517+f.n, time.FixedZone("X", 5400))))
	case t == reflect.TypeFor[workflow.StageTable]():
		v.Set(reflect.ValueOf(workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
			workflow.StageOne: {Calls: f.n, PromptTokens: -f.n, CompletionTokens: 3}, workflow.StageAction: {Calls: 1}})))
	case t == reflect.TypeFor[map[string]any]():
		v.Set(reflect.ValueOf(map[string]any{"b<": path + "\u2028", "a": []any{1.5, true, nil, map[string]any{"x\xff": "&"}}, "n": f.n}))
	case t.Kind() == reflect.String:
		v.SetString(path + " <&> \u2028 \xff é\t")
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		v.SetInt(int64(-7 - f.n))
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() == reflect.Struct:
		for i := range v.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				f.t.Fatalf("%s.%s is unexported: teach this test (and the encoder) its type %s", path, sf.Name, t)
			}
			f.fill(v.Field(i), path+"."+sf.Name, depth)
		}
	case t.Kind() == reflect.Pointer:
		if depth < maxFillDepth {
			p := reflect.New(t.Elem())
			f.fill(p.Elem(), path, depth+1)
			v.Set(p)
		}
	case t.Kind() == reflect.Slice:
		s := reflect.MakeSlice(t, 2, 2)
		for i := range 2 {
			f.fill(s.Index(i), path+"["+string(rune('0'+i))+"]", depth)
		}
		v.Set(s)
	default:
		f.t.Fatalf("%s has type %s, which this test does not fill: teach it (and appendWorkflow, appendMessage) the type", path, t)
	}
}

// filledWorkflow and filledMessage are a Workflow and a Message with every
// field set (filler).
func filledWorkflow(t *testing.T) *workflow.Workflow {
	var w workflow.Workflow
	(&filler{t: t}).fill(reflect.ValueOf(&w).Elem(), "Workflow", 0)
	return &w
}

func filledMessage(t *testing.T) *workflow.Message {
	var m workflow.Message
	(&filler{t: t}).fill(reflect.ValueOf(&m).Elem(), "Message", 0)
	return &m
}

// walk calls visit with every value reachable from v through struct
// fields, pointers and slice elements (not into maps, times and stage
// tables), each before what it holds, in an order that depends only on
// v's shape.
func walk(v reflect.Value, path string, visit func(v reflect.Value, path string)) {
	visit(v, path)
	switch t := v.Type(); {
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[workflow.StageTable]():
	case t.Kind() == reflect.Struct:
		for i := range v.NumField() {
			walk(v.Field(i), path+"."+t.Field(i).Name, visit)
		}
	case t.Kind() == reflect.Pointer:
		if !v.IsNil() {
			walk(v.Elem(), path, visit)
		}
	case t.Kind() == reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), path+"["+string(rune('0'+i))+"]", visit)
		}
	}
}

// variants calls check with the filled value of each field changed in
// turn to its zero value and, for a slice or a map, to an empty one: every
// omitempty and omitzero branch, and nil against empty for every slice and
// map, with everything else set.
func variants[T any](t *testing.T, filled func(*testing.T) *T, check func(name string, v *T)) {
	for i := 0; ; i++ {
		found := false
		for _, empty := range []bool{false, true} {
			v := filled(t)
			name := ""
			j := 0
			walk(reflect.ValueOf(v).Elem(), "", func(f reflect.Value, path string) {
				if j == i && path != "" {
					switch {
					case !empty:
						f.SetZero()
						name = path + " zero"
					case f.Kind() == reflect.Slice:
						f.Set(reflect.MakeSlice(f.Type(), 0, 0))
						name = path + " empty"
					case f.Kind() == reflect.Map:
						f.Set(reflect.MakeMap(f.Type()))
						name = path + " empty"
					}
				}
				j++
			})
			found = found || j > i
			if name != "" {
				check(name, v)
			}
		}
		if !found {
			return
		}
	}
}
