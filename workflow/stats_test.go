package workflow

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stageMaps are byStage values as the map StageTable replaced held them.
var stageMaps = map[string]map[Stage]StageStats{
	"nil":   nil,
	"empty": {},
	"one":   {StageOne: {Calls: 1, PromptTokens: 2, CompletionTokens: 3, CachedTokens: 1}},
	"every known stage": {
		StageOne: {Calls: 5, PromptTokens: 1928, CompletionTokens: 180, CachedTokens: 1024}, StageTwo: {Calls: 5, PromptTokens: 590, CompletionTokens: 57},
		StagePlan: {Calls: 1}, StageRepair: {Calls: 2, PromptTokens: -1}, StageAction: {Calls: 3, CompletionTokens: 1 << 40},
		StageCompact: {Calls: 1, PromptTokens: 9, CompletionTokens: 9},
	},
	"zero entry": {StageTwo: {}},
	"unknown stages": {
		StageOne: {Calls: 1}, "later": {Calls: 2}, "a<b>&c": {Calls: 3}, "": {Calls: 4}, "stage10": {Calls: 5}, "\u2028": {Calls: 6},
	},
	"only unknown":         {"zz": {Calls: 1, PromptTokens: 2}},
	"invalid UTF-8 stages": {"bad\xff": {Calls: 1}, "bad\xfe": {Calls: 2}, StageAction: {Calls: 3}},
}

// statsWithMap is Stats as it was, ByStage a map.
type statsWithMap struct {
	LLMCalls         int                  `json:"llmCalls"`
	PromptTokens     int                  `json:"promptTokens"`
	CompletionTokens int                  `json:"completionTokens"`
	Actions          int                  `json:"actions"`
	ByStage          map[Stage]StageStats `json:"byStage"`
}

// TestStageTableJSONIsTheMapsJSON holds a StageTable's JSON, inside Stats
// and alone, equal byte for byte to the map's it replaced, and its decoding
// equal to the map's decoding.
func TestStageTableJSONIsTheMapsJSON(t *testing.T) {
	for name, m := range stageMaps {
		t.Run(name, func(t *testing.T) {
			table := StageTableOf(m)
			if got := table.Map(); !cmp.Equal(got, m) || (got == nil) != (m == nil) {
				t.Errorf("Map() = %#v, want %#v", got, m)
			}
			want, err := json.Marshal(statsWithMap{LLMCalls: 1, Actions: 2, ByStage: m})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(Stats{LLMCalls: 1, Actions: 2, ByStage: table})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Marshal:\n got %s\nwant %s", got, want)
			}
			var decodedMap statsWithMap
			var decoded Stats
			if err := json.Unmarshal(want, &decodedMap); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &decoded); err != nil {
				t.Fatal(err)
			}
			if !decoded.ByStage.Equal(StageTableOf(decodedMap.ByStage)) {
				t.Errorf("Unmarshal: got %v, want %v", decoded.ByStage.Map(), decodedMap.ByStage)
			}
			again, _ := json.Marshal(decoded)
			againMap, _ := json.Marshal(decodedMap)
			if !bytes.Equal(again, againMap) {
				t.Errorf("Marshal after Unmarshal:\n got %s\nwant %s", again, againMap)
			}
		})
	}
}

// TestStageTableUnmarshalsOverAValueAsAMap decodes into tables that hold
// entries already: an object adds and replaces entries, null empties the
// table, as with a map.
func TestStageTableUnmarshalsOverAValueAsAMap(t *testing.T) {
	for _, doc := range []string{
		`{"stage1":{"calls":7},"later":{"calls":1},"plan":{"promptTokens":3}}`,
		`{}`,
		`null`,
		`{"stage2":{"calls":1,"promptTokens":2,"completionTokens":3,"extra":4}}`,
	} {
		for name, m := range stageMaps {
			m := maps.Clone(m)
			table := StageTableOf(m)
			errMap := json.Unmarshal([]byte(doc), &m)
			errTable := json.Unmarshal([]byte(doc), &table)
			if errMap != nil || errTable != nil {
				t.Fatalf("%s into %s: errors %v and %v", doc, name, errMap, errTable)
			}
			if got := table.Map(); !cmp.Equal(got, m) || (got == nil) != (m == nil) {
				t.Errorf("%s into %s: got %#v, want %#v", doc, name, got, m)
			}
		}
	}
	var table StageTable
	if err := json.Unmarshal([]byte(`{"stage1":{"calls":"x"}}`), &table); err == nil {
		t.Error("a count that is not a number decoded without an error")
	}
}

func FuzzStageTableJSON(f *testing.F) {
	for _, m := range stageMaps {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var m map[Stage]StageStats
		var table StageTable
		errMap := json.Unmarshal(doc, &m)
		errTable := json.Unmarshal(doc, &table)
		if (errMap == nil) != (errTable == nil) {
			t.Fatalf("errors %v and %v", errMap, errTable)
		}
		if errMap != nil {
			return
		}
		if got := table.Map(); !cmp.Equal(got, m) || (got == nil) != (m == nil) {
			t.Fatalf("decoded %#v, want %#v", got, m)
		}
		want, err1 := json.Marshal(m)
		got, err2 := json.Marshal(table)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("encoded %s (%v), want %s (%v)", got, err2, want, err1)
		}
	})
}

// TestStageTableCopiesShareNothing changes a copy of a workflow's stats,
// known and other stages, and checks the original kept its counts.
func TestStageTableCopiesShareNothing(t *testing.T) {
	for name, m := range stageMaps {
		w := &Workflow{Stats: Stats{ByStage: StageTableOf(m)}}
		c := w.Clone()
		shallow := *w
		for _, s := range []Stage{StageOne, StagePlan, "later", "new"} {
			c.Stats.CountCall(s, 10, 1, 0)
			shallow.Stats.CountCall(s, 10, 1, 0)
		}
		if got := w.Stats.ByStage.Map(); !cmp.Equal(got, m) || (got == nil) != (m == nil) {
			t.Errorf("%s: the original became %#v after its copies counted calls", name, got)
		}
		if c.Stats.ByStage.Get("new").Calls != 1 || shallow.Stats.ByStage.Get(StageOne).Calls != m[StageOne].Calls+1 {
			t.Errorf("%s: copies counted %v and %v", name, c.Stats.ByStage.Map(), shallow.Stats.ByStage.Map())
		}
	}
}

func TestStageTableReads(t *testing.T) {
	table := StageTableOf(stageMaps["unknown stages"])
	if table.Len() != 6 || table.Get(StageOne).Calls != 1 || table.Get("later").Calls != 2 || table.Get(StageTwo) != (StageStats{}) {
		t.Errorf("Len %d, Get %v", table.Len(), table.Map())
	}
	var order []Stage
	for s := range table.All() {
		order = append(order, s)
	}
	if !slices.IsSorted(order) || len(order) != 6 {
		t.Errorf("All yielded %q, want the 6 stages sorted", order)
	}
	for s := range table.All() {
		if s != "" {
			t.Errorf("All went on after yield returned false, at %q", s)
		}
		break
	}
	if StageTableOf(nil).Equal(StageTableOf(map[Stage]StageStats{})) {
		t.Error("the null table equals the empty one")
	}
	var s Stats
	s.CountCall(StageOne, 3, 4, 2)
	s.CountCall(StageOne, 1, 1, 0)
	s.CountCall("later", 1, 0, 0)
	want := map[Stage]StageStats{StageOne: {Calls: 2, PromptTokens: 4, CompletionTokens: 5, CachedTokens: 2}, "later": {Calls: 1, PromptTokens: 1}}
	if !cmp.Equal(s.ByStage.Map(), want) || s.LLMCalls != 3 || s.PromptTokens != 5 || s.CompletionTokens != 5 {
		t.Errorf("counted %+v, byStage %v", s, s.ByStage.Map())
	}
}
