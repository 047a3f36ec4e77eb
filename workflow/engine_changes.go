package workflow

// noChanges is the Changes of an engine configured without one: commits
// are published nowhere.
type noChanges struct{}

func (noChanges) Publish(Change) {}

func (noChanges) Subscribe(string) (<-chan Change, func()) { return nil, func() {} }
