package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// A wirePlan sets a value of one wire type from a value of one domain
// type, as wireOf describes. Working out which field goes where is done
// once per pair of types (planOf), not once per value: a 200-message view
// reads each struct tag once in the process's life, not 200 times.
type wirePlan func(dst, src reflect.Value) error

// wirePlans holds the plan of each pair of types converted so far, the
// way encoding/json keeps one encoder per type: a memo of a pure function
// of two types, filled on first use and never changed after.
var wirePlans sync.Map // planKey → wirePlan

// planKey names a conversion: to dst from src.
type planKey struct{ dst, src reflect.Type }

var marshalerType = reflect.TypeFor[json.Marshaler]()

// planOf returns the plan converting src values to dst values. A type
// that contains itself gets, while its plan is being made, a stand-in that
// waits for it (encoding/json's typeEncoder does the same).
func planOf(dst, src reflect.Type) wirePlan {
	key := planKey{dst, src}
	if p, ok := wirePlans.Load(key); ok {
		return p.(wirePlan)
	}
	var (
		wg   sync.WaitGroup
		plan wirePlan
	)
	wg.Add(1)
	p, loaded := wirePlans.LoadOrStore(key, wirePlan(func(d, s reflect.Value) error {
		wg.Wait()
		return plan(d, s)
	}))
	if loaded {
		return p.(wirePlan)
	}
	plan = makePlan(dst, src)
	wg.Done()
	wirePlans.Store(key, plan)
	return plan
}

// makePlan makes the plan to dt from st; a nil pointer, map or slice
// leaves dst zero.
func makePlan(dt, st reflect.Type) wirePlan {
	plan := kindPlan(dt, st)
	if k := st.Kind(); k != reflect.Pointer && k != reflect.Map && k != reflect.Slice {
		return plan
	}
	return func(dst, src reflect.Value) error {
		if src.IsNil() {
			return nil
		}
		return plan(dst, src)
	}
}

// kindPlan makes the plan to dt from a non-nil st. The plans of the
// parts are looked up now, so converting a value looks nothing up.
func kindPlan(dt, st reflect.Type) wirePlan {
	if p := scalarPlan(dt, st); p != nil {
		return p
	}
	switch k := st.Kind(); {
	case st.AssignableTo(dt):
		return func(dst, src reflect.Value) error { dst.Set(src); return nil }
	case k == reflect.Pointer && dt.Kind() == reflect.Pointer:
		return newPlan(dt, planOf(dt.Elem(), st.Elem()), false)
	case k == reflect.Pointer:
		elem := planOf(dt, st.Elem())
		return func(dst, src reflect.Value) error { return elem(dst, src.Elem()) }
	case dt.Kind() == reflect.Pointer:
		return newPlan(dt, planOf(dt.Elem(), st), true)
	case st.Implements(marshalerType):
		return func(dst, src reflect.Value) error {
			data, err := json.Marshal(src.Interface())
			if err != nil {
				return err
			}
			return json.Unmarshal(data, dst.Addr().Interface())
		}
	case k == reflect.Struct && dt.Kind() == reflect.Struct:
		return structPlan(dt, st)
	case k == reflect.Slice && dt.Kind() == reflect.Slice:
		return slicePlan(dt, planOf(dt.Elem(), st.Elem()))
	case k == dt.Kind() && st.ConvertibleTo(dt):
		return func(dst, src reflect.Value) error { dst.Set(src.Convert(dt)); return nil }
	default:
		return func(reflect.Value, reflect.Value) error { return fmt.Errorf("no conversion from %s to %s", st, dt) }
	}
}

// scalarPlan copies a string, integer, float or bool to the same kind
// (a named string to a string): the kind's own setter, cheaper than
// reflect's Set or Convert, which check the types on every call. Nil for
// any other pair, and for a type with its own JSON encoding.
func scalarPlan(dt, st reflect.Type) wirePlan {
	if st.Kind() != dt.Kind() || st.Implements(marshalerType) {
		return nil
	}
	switch st.Kind() {
	case reflect.String:
		return func(dst, src reflect.Value) error { dst.SetString(src.String()); return nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst, src reflect.Value) error { dst.SetInt(src.Int()); return nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst, src reflect.Value) error { dst.SetUint(src.Uint()); return nil }
	case reflect.Float32, reflect.Float64:
		return func(dst, src reflect.Value) error { dst.SetFloat(src.Float()); return nil }
	case reflect.Bool:
		return func(dst, src reflect.Value) error { dst.SetBool(src.Bool()); return nil }
	}
	return nil
}

// newPlan converts, with elem, into a new *dt.Elem(): from what src
// points at, or (byValue) from src itself, left nil when src is zero.
func newPlan(dt reflect.Type, elem wirePlan, byValue bool) wirePlan {
	return func(dst, src reflect.Value) error {
		if byValue && src.IsZero() {
			return nil
		}
		if !byValue {
			src = src.Elem()
		}
		p := reflect.New(dt.Elem())
		if err := elem(p.Elem(), src); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
}

// slicePlan converts a slice of type dt item by item, with item.
func slicePlan(dt reflect.Type, item wirePlan) wirePlan {
	return func(dst, src reflect.Value) error {
		s := reflect.MakeSlice(dt, src.Len(), src.Len())
		for i := range src.Len() {
			if err := item(s.Index(i), src.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		dst.Set(s)
		return nil
	}
}

// fieldPlan sets dst's field at index, with plan, from src's field at
// from, or from src as a whole when from < 0 (an untagged embedded
// struct of dst).
type fieldPlan struct {
	index, from int
	name        string
	plan        wirePlan
}

// structPlan sets each field of dt from the field of st with the same
// JSON name; an untagged embedded struct of dt takes its fields from st
// too; a field st lacks stays zero (computed for the wire).
func structPlan(dt, st reflect.Type) wirePlan {
	var fields []fieldPlan
	next := 0 // the fields are mostly in the same order: look there first
	for i := range dt.NumField() {
		f := dt.Field(i)
		switch name := jsonName(f); {
		case !f.IsExported() || name == "-":
		case f.Anonymous && name == f.Name && f.Type.Kind() == reflect.Struct:
			fields = append(fields, fieldPlan{index: i, from: -1, name: name, plan: structPlan(f.Type, st)})
		default:
			if k := fieldNamed(st, name, next); k >= 0 {
				next = k + 1
				fields = append(fields, fieldPlan{index: i, from: k, name: name, plan: planOf(f.Type, st.Field(k).Type)})
			}
		}
	}
	return func(dst, src reflect.Value) error {
		for _, f := range fields {
			if f.from < 0 {
				if err := f.plan(dst.Field(f.index), src); err != nil {
					return err
				}
			} else if err := f.plan(dst.Field(f.index), src.Field(f.from)); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	}
}

// fieldNamed is the index of t's exported field whose JSON name is name,
// looked for from index from on, then before it; -1 for none.
func fieldNamed(t reflect.Type, name string, from int) int {
	n := t.NumField()
	for i := range n {
		k := (from + i) % n
		if f := t.Field(k); f.IsExported() && jsonName(f) == name {
			return k
		}
	}
	return -1
}
