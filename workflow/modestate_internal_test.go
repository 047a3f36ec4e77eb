package workflow

import (
	"reflect"
	"strings"
	"testing"
)

// commonMember names exactly the JSON members of Checkpoint's fields, so
// UnmarshalJSON keeps every other member, and only those, as the mode's.
func TestCommonMembersAreCheckpointsTags(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[Checkpoint]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if !commonMember(name) {
			t.Errorf("field %s's member %q is not a common member", typ.Field(i).Name, name)
		}
	}
	for _, m := range []string{"plan", "planIndex", "replans", "compactionSkipped"} {
		if commonMember(m) {
			t.Errorf("%q, a mode's member, is a common member", m)
		}
	}
}
