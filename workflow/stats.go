package workflow

import (
	"encoding/json"
	"iter"
	"maps"
	"math/bits"
	"slices"
)

// StageStats counts the model calls of one stage (DESIGN §9.5
// stats.byStage).
type StageStats struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens is how many of PromptTokens the provider served from its
	// prompt cache (DESIGN §10.1; 0 for calls counted before it existed).
	CachedTokens int `json:"cachedTokens"`
}

// StageTable is Stats.ByStage: the StageStats of each stage that made
// calls, encoded in JSON exactly as a map[Stage]StageStats is (an object
// with the stages as keys in sorted order; null for the zero value, a
// workflow that never counted a call, like a nil map).
//
// It is a value: copying it copies the counts of the known stages, and the
// table of any other stage (a stage this version does not know, read back
// from a stored state) is never changed once made, only replaced, so a
// copy never shares anything a writer changes. A workflow is copied on
// every commit and read; a map here was a new allocation each time.
type StageTable struct {
	known  [len(knownStages)]StageStats // zero where has has no bit
	has    uint8                        // bit i: known[i] is an entry
	other  map[Stage]StageStats         // entries of other stages; nil when none; copy on write
	object bool                         // false: the table is null (no entry either)
}

// knownStages are the stages a StageTable keeps without a map, in the order
// JSON writes a map's keys (sorted by their bytes).
var knownStages = [...]Stage{StageAction, StageCompact, StagePlan, StageRepair, StageOne, StageTwo}

// stageIndex is s's index in knownStages, or -1.
func stageIndex(s Stage) int {
	switch s {
	case StageAction:
		return 0
	case StageCompact:
		return 1
	case StagePlan:
		return 2
	case StageRepair:
		return 3
	case StageOne:
		return 4
	case StageTwo:
		return 5
	}
	return -1
}

// StageTableOf returns the table holding m's entries; nil gives the null
// table, as a nil map encodes.
func StageTableOf(m map[Stage]StageStats) StageTable {
	var t StageTable
	if m != nil {
		t.setAll(m)
	}
	return t
}

// Get returns the entry of stage s (zero when it has none).
func (t StageTable) Get(s Stage) StageStats {
	if i := stageIndex(s); i >= 0 {
		return t.known[i]
	}
	return t.other[s]
}

// Len returns the number of entries.
func (t StageTable) Len() int { return bits.OnesCount8(t.has) + len(t.other) }

// All yields the entries in the order of their JSON encoding (by stage).
func (t StageTable) All() iter.Seq2[Stage, StageStats] {
	return func(yield func(Stage, StageStats) bool) {
		if t.other == nil {
			for i, s := range knownStages {
				if t.has&(1<<i) != 0 && !yield(s, t.known[i]) {
					return
				}
			}
			return
		}
		m := t.Map()
		for _, s := range slices.Sorted(maps.Keys(m)) {
			if !yield(s, m[s]) {
				return
			}
		}
	}
}

// Map returns the entries as a new map: nil for the null table, as JSON
// would decode it.
func (t StageTable) Map() map[Stage]StageStats {
	if !t.object {
		return nil
	}
	m := make(map[Stage]StageStats, t.Len())
	for i, s := range knownStages {
		if t.has&(1<<i) != 0 {
			m[s] = t.known[i]
		}
	}
	maps.Copy(m, t.other)
	return m
}

// Equal reports whether t and u hold the same entries and are both null or
// both not (so cmp compares tables by it).
func (t StageTable) Equal(u StageTable) bool {
	return t.object == u.object && t.has == u.has && t.known == u.known && maps.Equal(t.other, u.other)
}

// set makes v the entry of stage s (the table is no longer null).
func (t *StageTable) set(s Stage, v StageStats) {
	t.object = true
	if i := stageIndex(s); i >= 0 {
		t.known[i] = v
		t.has |= 1 << i
		return
	}
	m := make(map[Stage]StageStats, len(t.other)+1)
	maps.Copy(m, t.other)
	m[s] = v
	t.other = m
}

// setAll makes each entry of m t's entry of its stage (the table is no
// longer null).
func (t *StageTable) setAll(m map[Stage]StageStats) {
	t.object = true
	var other map[Stage]StageStats
	for s, v := range m {
		if i := stageIndex(s); i >= 0 {
			t.known[i] = v
			t.has |= 1 << i
			continue
		}
		if other == nil {
			other = make(map[Stage]StageStats, len(t.other)+len(m))
			maps.Copy(other, t.other)
		}
		other[s] = v
	}
	if other != nil {
		t.other = other
	}
}

// MarshalJSON writes t as json.Marshal writes the map t.Map(): null for
// the null table.
func (t StageTable) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Map())
}

// UnmarshalJSON reads t as json.Unmarshal reads a map[Stage]StageStats:
// null empties it, an object's entries are added to (or replace) t's.
func (t *StageTable) UnmarshalJSON(b []byte) error {
	var m map[Stage]StageStats
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*t = StageTable{}
		return nil
	}
	t.setAll(m)
	return nil
}

// CountCall adds one model call of stage to the totals and to ByStage.
// The engine calls it on the run's own state, so the call is persisted by
// the same atomic commit (Checkpoint or CommitStep) as the phase it
// belongs to: a crash before that commit repeats the call and counts it
// once.
func (s *Stats) CountCall(stage Stage, promptTokens, completionTokens, cachedTokens int) {
	s.LLMCalls++
	s.PromptTokens += promptTokens
	s.CompletionTokens += completionTokens
	b := s.ByStage.Get(stage)
	b.Calls++
	b.PromptTokens += promptTokens
	b.CompletionTokens += completionTokens
	b.CachedTokens += cachedTokens
	s.ByStage.set(stage, b)
}
