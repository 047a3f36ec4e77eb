package placeholders

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// uncachedEntry renders m's entry without the cache.
func uncachedEntry(m *workflow.Message) string {
	var b bytes.Buffer
	writeEntry(&b, m)
	return b.String()
}

// uncachedLine renders m's one-line entry without the cache.
func uncachedLine(m *workflow.Message) string {
	var b bytes.Buffer
	writeShortEntry(&b, m)
	return b.String()
}

// latestFromReference returns the round and seq of the first message of
// the latest section, walking every message but summaries oldest first
// (the seal rule of DESIGN §11.1), without the cache.
func latestFromReference(msgs []workflow.Message, latest int) (round int, seq int64) {
	order := newestFirstReference(msgs)
	slices.Reverse(order)
	used, started := 0, false
	for _, i := range order {
		m := &msgs[i]
		if m.Role == workflow.RoleSummary {
			continue
		}
		r := utf8.RuneCountInString(uncachedEntry(m))
		if !started || m.Round != round || used > 0 && used+1+r > latest {
			round, seq, started, used = m.Round, m.Seq, true, 0
		}
		if used > 0 {
			used++
		}
		used += r
	}
	return round, seq
}

// historyReference is the history renderer without the entry cache: the
// cached renderer must give the same text. all are the workflow's
// messages, live the entries (after the summary's), room the runes the
// sealed lines may take.
func sectionsReference(all, live []workflow.Message, room int) (latest, sealed string) {
	round, seq := latestFromReference(all, DefaultLatestBudget)
	var lt, lines []string
	for _, i := range newestFirstReference(live) {
		m := &live[i]
		if m.Round > round || m.Round == round && m.Seq >= seq {
			lt = append(lt, uncachedEntry(m))
			continue
		}
		lines = append(lines, uncachedLine(m))
	}
	used, kept := 0, 0
	for n, l := range lines {
		r := utf8.RuneCountInString(l)
		if n > 0 {
			r++
		}
		if used+r > room {
			break
		}
		used, kept = used+r, kept+1
	}
	omitted := len(lines) - kept
	for omitted > 0 && kept > 0 && used+omittedLen(omitted) > room {
		used -= utf8.RuneCountInString(lines[kept-1])
		if kept > 1 {
			used--
		}
		kept--
		omitted++
	}
	sealed = strings.Join(lines[:kept], "\n")
	if omitted > 0 {
		sealed += omittedLine(omitted, kept > 0)
	}
	return strings.Join(lt, "\n"), sealed
}

// historyReference is History without the cache.
func historyReference(msgs []workflow.Message, budget int) string {
	if len(msgs) == 0 {
		return "(no history yet)"
	}
	latest, sealed := sectionsReference(msgs, msgs, historyBudget(budget))
	return joinNonEmpty(latest, sealed)
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n")
}

// newestFirstReference is the former newestFirst: every index in a list,
// sorted by round, then seq, both descending, later in the slice first.
func newestFirstReference(msgs []workflow.Message) []int {
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = len(msgs) - 1 - i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(msgs[b].Round, msgs[a].Round); c != 0 {
			return c
		}
		return cmp.Compare(msgs[b].Seq, msgs[a].Seq)
	})
	return order
}

func TestHistoryMatchesUncachedRendering(t *testing.T) {
	t.Parallel()
	c := NewCache()
	long := historyMessages(3)
	long[2].Findings = strings.Repeat("très long résultat ", 400) // the newest entry alone is cut
	for _, tc := range []struct {
		name string
		msgs []workflow.Message
	}{
		{"none", nil},
		{"one", historyMessages(1)},
		{"many", historyMessages(300)},
		{"newest too long", long},
		{"mixed roles", mixedMessages()},
		{"out of order", shuffled(historyMessages(120))},
		// With a workflow ID, entries are also found by position.
		{"many, in a workflow", inWorkflow("wf_match_many", historyMessages(300))},
		{"mixed roles, in a workflow", inWorkflow("wf_match_mixed", mixedMessages())},
		{"out of order, in a workflow", inWorkflow("wf_match_shuffled", shuffled(historyMessages(120)))},
	} {
		for _, budget := range []int{200, 230, 300, 777, 2000, 12000, 100000} {
			want := historyReference(tc.msgs, budget)
			for pass := range 2 { // the second pass is served from the cache
				if got := c.History(tc.msgs, budget); got != want {
					t.Errorf("%s, budget %d, pass %d: History =\n%s\nwant\n%s", tc.name, budget, pass, got, want)
				}
				if got := strings.Join(c.HistoryPieces(tc.msgs, budget, nil), ""); got != want {
					t.Errorf("%s, budget %d, pass %d: HistoryPieces joined =\n%s\nwant\n%s", tc.name, budget, pass, got, want)
				}
			}
		}
	}
}

// inWorkflow returns msgs as messages of workflow id.
func inWorkflow(id string, msgs []workflow.Message) []workflow.Message {
	for i := range msgs {
		msgs[i].WorkflowID = id
	}
	return msgs
}

// shuffled returns msgs in a fixed scrambled order, with seq ties.
func shuffled(msgs []workflow.Message) []workflow.Message {
	out := slices.Clone(msgs)
	for i := range out {
		j := (i*37 + 11) % len(out)
		out[i], out[j] = out[j], out[i]
		if i%9 == 0 {
			out[i].Seq = 5 // equal seqs keep reverse slice order
		}
	}
	return out
}

func mixedMessages() []workflow.Message {
	return []workflow.Message{
		{ID: "mix_u1", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "Find   the\nreport", DocumentsLabel: "round1_user_context", Documents: docs("mix_u1", "a b.txt")},
		{ID: "mix_a1", Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, Action: "web.get", Status: workflow.MessageError, Summary: "web.get failed: 404\nnot found"},
		{ID: "mix_a2", Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAction},
		{ID: "mix_s1", Seq: 4, Round: 1, Step: 3, Role: workflow.RoleAssistant, Text: strings.Repeat("é ", 300), Learnings: []string{"one", "two\nlines"}},
		{Seq: 5, Round: 2, Role: workflow.RoleUser, Text: "no id"},
	}
}

// TestEntryCacheChecksContent changes each field an entry is rendered from
// under the same message ID (and a slice in place): every change must be
// rendered afresh, never served from the cache.
func TestEntryCacheChecksContent(t *testing.T) {
	t.Parallel()
	base := func() workflow.Message {
		return workflow.Message{
			ID: "cache_msg_1", Seq: 7, Round: 2, Step: 3, Role: workflow.RoleAction, Text: "t",
			Action: "ai.process", ActionObjective: "objective", Status: workflow.MessageSuccess,
			DocumentsLabel: "round2_step3_ai_process", Documents: docs("cache_msg_1", "out.md"),
			Summary: "ai.process succeeded; result: r", Findings: "found it", Learnings: []string{"learnt"},
		}
	}
	changes := map[string]func(m *workflow.Message){
		"round":     func(m *workflow.Message) { m.Round = 3 },
		"step":      func(m *workflow.Message) { m.Step = 4 },
		"role":      func(m *workflow.Message) { m.Role = workflow.RoleUser },
		"text":      func(m *workflow.Message) { m.Role, m.Text = workflow.RoleAssistant, "other" },
		"action":    func(m *workflow.Message) { m.Action = "web.get" },
		"objective": func(m *workflow.Message) { m.ActionObjective = "another objective" },
		"status":    func(m *workflow.Message) { m.Status = workflow.MessageError },
		"label":     func(m *workflow.Message) { m.DocumentsLabel = "other_label" },
		"doc id":    func(m *workflow.Message) { m.Documents[0].ID = "doc_other" },
		"doc name":  func(m *workflow.Message) { m.Documents[0].Name = "renamed.md" },
		"no docs":   func(m *workflow.Message) { m.Documents = nil },
		"summary":   func(m *workflow.Message) { m.Summary = "a different summary" },
		"findings":  func(m *workflow.Message) { m.Findings = "found something else" },
		"learnings": func(m *workflow.Message) { m.Learnings[0] = "changed in place" },
		"more":      func(m *workflow.Message) { m.Learnings = append(m.Learnings, "another") },
	}
	c := NewCache()
	for name, change := range changes {
		m := base()
		before := c.renderedEntry(&m)
		if before.text != uncachedEntry(&m) {
			t.Fatalf("%s: cached entry differs from the rendering", name)
		}
		change(&m)
		want := uncachedEntry(&m)
		if want == before.text {
			t.Fatalf("%s: the change does not show in the entry (test is wrong)", name)
		}
		if got := c.renderedEntry(&m); got.text != want || got.runes != utf8.RuneCountInString(want) {
			t.Errorf("%s: entry after the change = %q (%d runes), want %q", name, got.text, got.runes, want)
		}
	}
}

// TestEntryCacheBounded renders more distinct messages than the cache keeps:
// it never holds more than two generations, and an entry in use survives
// the turnover.
func TestEntryCacheBounded(t *testing.T) {
	t.Parallel()
	c := NewCache()
	hot := workflow.Message{ID: "bounded_hot", Round: 1, Role: workflow.RoleUser, Text: "hot"}
	c.renderedEntry(&hot)
	for i := range 3 * maxCachedEntries {
		m := workflow.Message{ID: fmt.Sprintf("bounded_%d", i), Round: 1, Role: workflow.RoleUser, Text: "x"}
		c.renderedEntry(&m)
		if i%100 == 0 {
			c.renderedEntry(&hot)
		}
		if n := c.entries.Len(); n > 2*maxCachedEntries {
			t.Fatalf("after %d messages the cache holds %d entries, over %d", i+1, n, 2*maxCachedEntries)
		}
	}
	if _, ok := c.entries.Get(hot.ID); !ok {
		t.Error("an entry rendered on every step was dropped from the cache")
	}
	big := workflow.Message{ID: "bounded_big", Round: 1, Role: workflow.RoleAction, Action: "x.y",
		Findings: strings.Repeat("z", maxCachedEntryBytes)}
	if e := c.renderedEntry(&big); e.text != uncachedEntry(&big) {
		t.Error("a large entry is not rendered as writeEntry renders it")
	}
	if _, cached := c.entries.Get(big.ID); cached {
		t.Errorf("an entry over %d bytes was cached", maxCachedEntryBytes)
	}
}

// Rounds render their histories concurrently through the one cache: every
// render gives the uncached text (run with -race).
func TestHistoryConcurrentRenders(t *testing.T) {
	t.Parallel()
	msgs := historyMessages(150)
	want := historyReference(msgs, DefaultHistoryBudget)
	c := NewCache()
	done := make(chan string)
	for range 8 {
		go func() {
			var got string
			for range 20 {
				got = c.History(msgs, DefaultHistoryBudget)
				_, _ = c.Compaction(msgs, 0)
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Fatal("a concurrent render differs from the uncached one")
		}
	}
}

// A workflow's messages changed in place, added, dropped or replaced by
// others at the same indexes between two renders: each render gives the
// uncached text, never an entry found at a position for other content.
func TestPositionsFollowChangedMessages(t *testing.T) {
	t.Parallel()
	msgs := inWorkflow("wf_positions_change", historyMessages(40))
	c := NewCache()
	steps := []struct {
		name   string
		change func([]workflow.Message) []workflow.Message
	}{
		{"as rendered before", func(m []workflow.Message) []workflow.Message { return m }},
		{"findings in place", func(m []workflow.Message) []workflow.Message { m[39].Findings = "changed"; return m }},
		{"learning in place", func(m []workflow.Message) []workflow.Message { m[38].Learnings[0] = "changed"; return m }},
		{"status", func(m []workflow.Message) []workflow.Message { m[37].Status = workflow.MessageError; return m }},
		{"document name", func(m []workflow.Message) []workflow.Message { m[35].Documents[0].Name = "other.md"; return m }},
		{"one more", func(m []workflow.Message) []workflow.Message {
			n := m[39]
			n.ID, n.Seq, n.Findings = "msg_more", 41, "new"
			return append(m, n)
		}},
		{"the oldest dropped (indexes shift)", func(m []workflow.Message) []workflow.Message { return m[1:] }},
		{"another workflow's messages under its ID", func(m []workflow.Message) []workflow.Message {
			return inWorkflow("wf_positions_change", mixedMessages())
		}},
	}
	for _, st := range steps {
		msgs = st.change(msgs)
		for _, budget := range []int{300, 2000, 12000} {
			if got, want := c.History(msgs, budget), historyReference(msgs, budget); got != want {
				t.Fatalf("%s, budget %d: History =\n%s\nwant\n%s", st.name, budget, got, want)
			}
		}
	}
}

// TestPositionCacheBounded renders the histories of more workflows than
// the position cache keeps: it never holds more than two generations of
// workflows, referring to about 2 × maxCachedEntries entries at most, and
// a workflow rendered on every step survives the turnover.
func TestPositionCacheBounded(t *testing.T) {
	t.Parallel()
	c := NewCache()
	hot := inWorkflow("wf_bounded_hot", historyMessages(30))
	c.History(hot, 0)
	for i := range 3 * maxPositionedWorkflows {
		c.History(inWorkflow(fmt.Sprintf("wf_bounded_%d", i), historyMessages(1+i%7)), 0)
		if i%100 == 0 {
			c.History(hot, 0)
		}
		if n, refs := c.positions.Len(), c.positions.Cost(); n > 2*maxPositionedWorkflows || refs > 2*(maxCachedEntries+len(hot)) {
			t.Fatalf("after %d workflows the cache holds %d workflows and %d references", i+1, n, refs)
		}
	}
	if _, ok := c.positions.Get("wf_bounded_hot"); !ok {
		t.Error("a workflow rendered on every step was dropped from the cache")
	}
	// A workflow of more messages than the cache holds positions for is
	// rendered; the workflows rendered after it turn the generations over,
	// so its positions are not kept.
	c.History(inWorkflow("wf_bounded_huge", historyMessages(3*maxCachedEntries)), 0)
	for i := range 2*maxPositionedWorkflows + 1 {
		c.History(inWorkflow(fmt.Sprintf("wf_after_huge_%d", i), historyMessages(1)), 0)
	}
	if _, ok := c.positions.Get("wf_bounded_huge"); ok {
		t.Error("a huge workflow's positions outlived two turnovers")
	}
	if refs := c.positions.Cost(); refs > 2*maxCachedEntries {
		t.Errorf("after a huge workflow the cache holds %d positions (max %d)", refs, 2*maxCachedEntries)
	}
}

// An action's text result is not in its entry, so the cache does not keep
// it (it may be large); a user's or assistant's text is, and a change of
// it alone is rendered afresh.
func TestEntryCacheKeepsOnlyShownText(t *testing.T) {
	t.Parallel()
	action := workflow.Message{ID: "cache_text_action", WorkflowID: "wf_cache_text", Round: 1, Step: 1, Role: workflow.RoleAction,
		Action: "web.get", Status: workflow.MessageSuccess, Summary: "web.get succeeded", Text: strings.Repeat("big result ", 1000)}
	c := NewCache()
	if got, want := c.History([]workflow.Message{action}, 0), uncachedEntry(&action); got != want {
		t.Fatalf("History = %q, want %q", got, want)
	}
	ce, ok := c.entries.Get(action.ID)
	if !ok {
		t.Fatal("the action's entry is not cached")
	}
	if n := len(ce.src.Text); n != 0 {
		t.Fatalf("the cached entry of an action keeps its text result (%d bytes)", n)
	}
	for _, role := range []workflow.Role{workflow.RoleUser, workflow.RoleAssistant} {
		m := workflow.Message{ID: "cache_text_" + string(role), Round: 1, Step: 2, Role: role, Text: "first text"}
		c.renderedEntry(&m)
		m.Text = "other text"
		if got, want := c.renderedEntry(&m).text, uncachedEntry(&m); got != want {
			t.Errorf("%s: entry after a text change = %q, want %q", role, got, want)
		}
	}
}

// TestPositionsRaceFreeOverTurnovers: renders of one workflow's history
// that grow its positions, while lookups of many other workflows turn the
// position cache's generations over, share no unguarded memory (run with
// -race) and keep rendering what a fresh render gives.
func TestPositionsRaceFreeOverTurnovers(t *testing.T) {
	t.Parallel()
	c := NewCache()
	wfID := workflow.NewID(workflow.PrefixWorkflow)
	var msgs []workflow.Message
	for i := range 60 {
		msgs = append(msgs, workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: wfID, Seq: int64(i + 1),
			Round: 1, Step: i, Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess,
			Summary: fmt.Sprintf("step %d done", i)})
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for n := 1; n <= len(msgs); n++ {
				if got, want := c.History(msgs[:n], 100_000), historyReference(msgs[:n], 100_000); got != want {
					t.Errorf("history of %d messages differs from a fresh render", n)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 3 * maxPositionedWorkflows {
			c.lockPositions([]workflow.Message{{WorkflowID: fmt.Sprintf("wf_other%d", i)}}).unlock()
		}
	})
	wg.Wait()
}
