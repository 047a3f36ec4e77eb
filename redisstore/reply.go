package redisstore

import (
	"fmt"

	"github.com/twostep/twostep/workflow"
)

// replyArray checks that a script replied with an array starting with a
// status word.
func replyArray(res any) ([]any, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) == 0 {
		return nil, workflow.Errorf(workflow.KindInternal, "unexpected script reply %T", res)
	}
	if _, ok := arr[0].(string); !ok {
		return nil, workflow.Errorf(workflow.KindInternal, "script reply starts with %T, not a status", arr[0])
	}
	return arr, nil
}

// replyStrings returns the string elements of a script reply from index
// from on.
func replyStrings(arr []any, from int) ([]string, error) {
	out := make([]string, 0, max(len(arr)-from, 0))
	for _, v := range arr[from:] {
		s, ok := v.(string)
		if !ok {
			return nil, workflow.Errorf(workflow.KindInternal, "script reply holds %T, not a string", v)
		}
		out = append(out, s)
	}
	return out, nil
}

// replyInt returns arr[i] as an integer.
func replyInt(arr []any, i int) (int64, error) {
	if i >= len(arr) {
		return 0, workflow.Errorf(workflow.KindInternal, "script reply has %d elements, want more than %d", len(arr), i)
	}
	switch v := arr[i].(type) {
	case int64:
		return v, nil
	case string:
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil {
			return 0, workflow.WrapKind(workflow.KindInternal, err, "script reply %q is not a number", v)
		}
		return n, nil
	}
	return 0, workflow.Errorf(workflow.KindInternal, "script reply holds %T, not a number", arr[i])
}
