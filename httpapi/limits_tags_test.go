package httpapi

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
)

// The OpenAPI bound of maxSteps is a struct tag, which cannot name the
// engine's constant (engine.DefaultMaxStepsLimit, the limit's one home):
// this keeps the two from drifting apart.
func TestMaxStepsTagIsTheEnginesLimit(t *testing.T) {
	t.Parallel()
	f, ok := reflect.TypeFor[apiv1.CreateWorkflowBody]().FieldByName("MaxSteps")
	if !ok {
		t.Fatal("CreateWorkflowBody has no MaxSteps field")
	}
	if got := f.Tag.Get("maximum"); got != strconv.Itoa(engine.DefaultMaxStepsLimit) {
		t.Errorf("maxSteps maximum tag = %q, want %d (workflow.DefaultMaxStepsLimit)", got, engine.DefaultMaxStepsLimit)
	}
}
