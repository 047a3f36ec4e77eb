package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// The attempt context behaves as context.WithTimeout(context.WithoutCancel(parent), d).
func TestAttemptContext(t *testing.T) {
	parent, cancelParent := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
	cancelParent(errors.New("round stopped"))

	c := newAttemptContext(parent, time.Hour)
	if c.Err() != nil || context.Cause(c) != nil {
		t.Fatalf("Err %v, Cause %v: the parent's cancellation must not reach the attempt", c.Err(), context.Cause(c))
	}
	if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Errorf("Deadline %v, %v; want about an hour from now", d, ok)
	}
	if c.Value(ctxKey{}) != "v" {
		t.Error("the parent's values are lost")
	}
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	select {
	case <-c.Done():
		t.Fatal("Done closed before the deadline or release")
	default:
	}
	c.release()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("Err after release = %v, want context.Canceled", c.Err())
	}
	<-c.Done()
	<-child.Done() // a derived context ends with it

	// The deadline ends it whether or not Done was asked for.
	late := newAttemptContext(context.Background(), -time.Second)
	if !errors.Is(late.Err(), context.DeadlineExceeded) {
		t.Errorf("Err past the deadline = %v, want DeadlineExceeded", late.Err())
	}
	<-late.Done()
	late.release()
	if !errors.Is(late.Err(), context.DeadlineExceeded) {
		t.Errorf("release changed Err to %v", late.Err())
	}

	soon := newAttemptContext(context.Background(), time.Millisecond)
	defer soon.release()
	<-soon.Done() // closed by the timer
	if !errors.Is(soon.Err(), context.DeadlineExceeded) {
		t.Errorf("Err after the timer = %v, want DeadlineExceeded", soon.Err())
	}
}

// uncomparableCtx is a context type whose values cannot be compared with
// == (a slice field): detach must not compare two of them.
type uncomparableCtx struct {
	context.Context
	tags []string
}

func TestRunDetachKeepsOnePerContext(t *testing.T) {
	type key struct{}
	r := &roundRun{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	d := r.detach(parent)
	if r.detach(parent) != d {
		t.Fatal("a second detach of the same context made a new one")
	}
	cancel()
	if d.Err() != nil || d.Done() != nil {
		t.Fatalf("the detached context follows its parent's cancellation: Err %v", d.Err())
	}
	if got := d.Value(key{}); got != "v" {
		t.Fatalf("detached Value = %v, want the parent's v", got)
	}
	other := context.WithValue(parent, key{}, "w")
	if d2 := r.detach(other); d2 == d || d2.Value(key{}) != "w" {
		t.Fatalf("detach of another context reused the old one (Value %v)", d2.Value(key{}))
	}
	a := uncomparableCtx{Context: context.Background(), tags: []string{"a"}}
	b := uncomparableCtx{Context: context.Background(), tags: []string{"b"}}
	r.detach(a)
	r.detach(b) // would panic comparing a and b
}
