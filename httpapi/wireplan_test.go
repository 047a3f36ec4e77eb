package httpapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeDomain and treeWire contain themselves: planOf must finish making
// their plan (a stand-in answers for it while it is made) and the plan
// must convert every level.
type treeDomain struct {
	Name     string       `json:"name"`
	Kind     treeKind     `json:"kind"`
	Children []treeDomain `json:"children"`
	Next     *treeDomain  `json:"next"`
	Internal string       `json:"-"`
}

type treeKind string

type treeWire struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"`
	Children []treeWire `json:"children"`
	Next     *treeWire  `json:"next"`
	Depth    int        `json:"depth"` // computed for the wire: stays zero
}

func TestWireOfSelfContainingTypes(t *testing.T) {
	t.Parallel()
	in := treeDomain{Name: "root", Kind: "a", Internal: "x",
		Children: []treeDomain{{Name: "c1", Kind: "b", Next: &treeDomain{Name: "n", Kind: "c"}}, {Name: "c2"}}}
	want := treeWire{Name: "root", Kind: "a",
		Children: []treeWire{{Name: "c1", Kind: "b", Next: &treeWire{Name: "n", Kind: "c"}}, {Name: "c2"}}}
	for range 2 { // the second conversion runs on the kept plan
		if diff := cmp.Diff(want, wireOf[treeWire](in)); diff != "" {
			t.Fatalf("wireOf (-want +got):\n%s", diff)
		}
	}
}
