package engine

import "github.com/twostep/twostep/workflow"

// noChanges is the Changes of an engine configured without one: commits
// are published nowhere.
type noChanges struct{}

func (noChanges) Publish(workflow.Change) {}

func (noChanges) Subscribe(string) (<-chan workflow.Change, func()) { return nil, func() {} }
