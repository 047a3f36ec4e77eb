package memstore

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
)

// The store keeps workflows, messages and traces (and webhook
// subscriptions and deliveries, and idempotent answers) as Go values of
// its own: a write stores a deep copy of what it is given (or, for a
// workflow handed over, workflow.Commit.Handover, the workflow itself),
// and every read hands out a deep copy, so a caller never shares memory
// with the store or with another caller. All of them go through own,
// which follows every exported field, so a field added to a stored type
// is copied without a change here. A read gives back exactly what was
// committed, which encodes to the same JSON as the Redis store's answer,
// its JSON round trip.
//
// Keeping every value as its encoding/json record, decoded on every read
// (what the Redis store does), was measured instead: on the bench a memory
// step's CPU went from about 0.5 to about 1.45 × langchaingo's (the
// traces' prompts are most of a step's bytes) and modes/react's
// TestAllocsPerStep from 193 to 268 allocations a step, over both budgets.
// Keeping only the messages as records, decoded on every read and in
// Commit's answer, still took a step to 0.67-0.84 × langchaingo's, over
// issue 35's 0.6.

// own makes *p own all its memory: every pointer, slice, map and
// interface value reachable from it through exported fields is replaced
// with a copy, all the way down, so *p, copied from a value, no longer
// shares memory a caller could change with it. Unexported fields are left
// as they are, so a type must never change their maps or slices in place
// (workflow.StageTable replaces its map; time.Time's location is never
// changed).
func own[T any](p *T) {
	ownValue(reflect.ValueOf(p).Elem())
}

// copyOf returns a deep copy of *p (see own), nil for nil.
func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := new(T)
	*c = *p
	own(c)
	return c
}

// ownValue is own for a settable value.
func ownValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(v.Elem())
		ownValue(p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && holdsMemory(f.Kind()) {
				ownValue(f)
			}
		}
	case reflect.Slice:
		if v.IsNil() || ownCommon(v) {
			return
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(s, v)
		if holdsMemory(v.Type().Elem().Kind()) {
			for i := range s.Len() {
				ownValue(s.Index(i))
			}
		}
		v.Set(s)
	case reflect.Map:
		if v.IsNil() || ownCommon(v) {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		deep := holdsMemory(v.Type().Elem().Kind())
		for it := v.MapRange(); it.Next(); {
			e := it.Value()
			if deep {
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				ownValue(c)
				e = c
			}
			m.SetMapIndex(it.Key(), e)
		}
		v.Set(m)
	case reflect.Interface:
		if v.IsNil() || !holdsMemory(v.Elem().Kind()) {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		ownValue(c)
		v.Set(c)
	case reflect.Array:
		if holdsMemory(v.Type().Elem().Kind()) {
			for i := range v.Len() {
				ownValue(v.Index(i))
			}
		}
	}
}

// ownCommon copies the slices and maps of the types the stored values
// hold most, whose elements hold no memory, without reflection; it
// reports false for any other type.
func ownCommon(v reflect.Value) bool {
	switch p := v.Addr().Interface().(type) {
	case *[]string:
		*p = slices.Clone(*p)
	case *json.RawMessage:
		*p = bytes.Clone(*p)
	case *map[string]string:
		*p = maps.Clone(*p)
	default:
		return false
	}
	return true
}

// holdsMemory reports whether a value of kind k may reach memory a copy
// must not share.
func holdsMemory(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Struct, reflect.Slice, reflect.Map, reflect.Interface, reflect.Array:
		return true
	}
	return false
}
