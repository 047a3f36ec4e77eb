//go:build !race

package react_test

// raceEnabled reports whether the race detector is on: it allocates on its
// own account, so allocation counts mean nothing then.
const raceEnabled = false
