package prompts

import (
	"fmt"
	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/templates"
	"reflect"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// thousandMessages is a 1,000-message workflow over 10 rounds.
func thousandMessages() (*workflow.Workflow, []workflow.Message) {
	msgs := make([]workflow.Message, 1000)
	for i := range msgs {
		round := 1 + i/100
		m := workflow.Message{ID: fmt.Sprintf("msg_%04d", i), WorkflowID: "wf_a", Seq: int64(i + 1), Round: round, Step: i % 100,
			Role: workflow.RoleAction, Action: "ai.process", ActionObjective: "Summarise chapter " + fmt.Sprint(i), Status: workflow.MessageSuccess,
			Summary:  "ai.process succeeded; result: chapter " + fmt.Sprint(i) + " is about " + strings.Repeat("things ", 10),
			Findings: strings.Repeat("finding ", 30), Learnings: []string{"chapter " + fmt.Sprint(i) + " matters"}}
		if i%100 == 0 {
			m.Role, m.Step, m.Action, m.Text = workflow.RoleUser, 0, "", "Please go on with round "+fmt.Sprint(round)
		}
		if i%10 == 5 {
			m.DocumentsLabel = fmt.Sprintf("round%d_step%d_ai_process", round, m.Step)
			m.Documents = []workflow.Document{doc(fmt.Sprintf("doc_%04d", i), m.ID, "chapter.md", "text/markdown", 4096)}
		}
		msgs[i] = m
	}
	return &workflow.Workflow{ID: "wf_a", Round: 10}, msgs
}

// BenchmarkStage1History1000 renders a full Stage 1 prompt for a
// 1,000-message workflow under the default 12,000-character history budget.
func BenchmarkStage1History1000(b *testing.B) {
	bld := newBuilder(b, 0)
	wf, msgs := thousandMessages()
	reg := newRegistry()
	in := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")}
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if _, err := bld.Stage1(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// longRound returns the messages of a round of steps echo steps as the
// React mode leaves them before step steps+1's Stage 1 (the bench
// module's long-round task): the user's prompt, then one action message
// per step, with a compaction summary committed whenever the history
// outgrows the default budget (Builder.Compaction), as the mode does
// before a step's first Stage 1 call.
func longRound(b *Builder, steps int) (*workflow.Workflow, []workflow.Message) {
	wf := &workflow.Workflow{ID: "wf_long", Round: 1, Step: steps + 1}
	msgs := []workflow.Message{{ID: "msg_user", WorkflowID: wf.ID, Seq: 1, Round: 1, Role: workflow.RoleUser,
		Text: "Echo the results, then say you are done.", Documents: []workflow.Document{}}}
	add := func(m workflow.Message) {
		m.Seq = int64(len(msgs) + 1)
		msgs = append(msgs, m)
	}
	for step := 1; step <= steps; step++ {
		if entries, _ := b.Compaction(msgs); len(entries) > 0 {
			add(messages.NewSummary(messages.SummaryInput{WorkflowID: wf.ID, Round: 1, Step: step,
				Text: "Earlier steps echoed their inputs in order; all succeeded.", Entries: entries}))
		}
		text := fmt.Sprintf("result of step %d with some text to summarise", step)
		m, _ := messages.NewAction(messages.ActionInput{WorkflowID: wf.ID, Round: 1, Step: step, Action: "ai.process",
			Objective: "echo " + text, Parameters: map[string]any{"text": text}, Result: workflow.ActionResult{Text: text}})
		add(m)
	}
	return wf, msgs
}

// compactionDue returns the shortest long round of at least from steps
// whose next step starts with a compaction (where one falls depends on the
// history budget's default and the entries' length).
func compactionDue(b *testing.B, bld *Builder, from int) (*workflow.Workflow, []workflow.Message) {
	for steps := from; steps < from+200; steps++ {
		wf, msgs := longRound(bld, steps)
		if entries, _ := bld.Compaction(msgs); len(entries) > 0 {
			return wf, msgs
		}
	}
	b.Fatalf("no compaction due in the %d steps after step %d", 200, from)
	return nil, nil
}

// BenchmarkStage1LongRound is the prompt side of a React step's Stage 1
// (the compaction check, then the render) at step 2 and at step 100 of a
// long round of small steps under the default history budget: the growth
// of a step's prompt work with the round. The history is longer at step
// 100 (it has reached its budget), so the prompt is too.
func BenchmarkStage1LongRound(b *testing.B) {
	for _, step := range []int{2, 100} {
		b.Run(fmt.Sprintf("step=%d", step), func(b *testing.B) {
			bld := newBuilder(b, 0)
			wf, msgs := longRound(bld, step-1)
			reg := newRegistry()
			in := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")}
			b.ReportAllocs()
			start := processCPU()
			var n int
			for b.Loop() {
				if entries, _ := bld.Compaction(msgs); len(entries) > 0 {
					b.Fatalf("step %d: compaction due", step)
				}
				r, err := bld.Stage1(in)
				if err != nil {
					b.Fatal(err)
				}
				n = len(r.Messages[len(r.Messages)-1].Content)
			}
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(n), "prompt-bytes")
		})
	}
}

// Stage 1 writes the history into the prompt in pieces: the prompt and
// the placeholders are exactly those of the stage1 template rendered with
// Stage1Values (the history joined), at every step of a long round with
// compaction summaries or without compaction (entries omitted), and with
// an override template that does not show the history.
func TestStage1PiecesMatchValues(t *testing.T) {
	t.Parallel()
	noHistory, err := templates.Parse("stage1", "--- user ---\n{{KEY:USER_PROMPT}}\n{{KEY:VALIDATION_FEEDBACK}}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {HistoryBudget: 3000}, {HistoryBudget: 3000, NoCompaction: true}} {
		bld := NewBuilder(newBuilder(t, 0).Templates(), opts)
		budget := opts.HistoryBudget
		st1, err := bld.Templates().Get(templates.Stage1)
		if err != nil {
			t.Fatal(err)
		}
		reg := newRegistry()
		for _, steps := range []int{0, 1, 12, 45, 99} {
			wf, msgs := longRound(bld, steps)
			for _, override := range []*templates.Template{nil, &noHistory} {
				in := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1"),
					Feedback: "a problem", Template: override}
				got, err := bld.Stage1(in)
				if err != nil {
					t.Fatal(err)
				}
				tmpl := st1
				if override != nil {
					tmpl = *override
				}
				want, err := RenderTemplate(tmpl, bld.Stage1Values(in))
				if err != nil {
					t.Fatal(err)
				}
				want.CachePrefix = tmpl.StablePrefix(stage1Volatile...)
				if sealed := tmpl.StablePrefix(stage1Step...); sealed > want.CachePrefix && sealed < len(want.Messages) {
					want.CacheSealed = sealed
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("budget %d, %d steps, override %v: Stage1 =\n%+v\nwant\n%+v", budget, steps, override != nil, got, want)
				}
			}
		}
	}
}

// BenchmarkCompactLongRound is the prompt side of the compaction call
// due first after step 90 of a long round of small steps (the bench
// module's long-round task): choosing the entries, rendering the compact
// prompt and reading the summary reply. It failed since the history budget
// became 2,000 characters, which moved the compactions off step 91.
func BenchmarkCompactLongRound(b *testing.B) {
	bld := newBuilder(b, 0)
	wf, msgs := compactionDue(b, bld, 90)
	reply := "Earlier steps echoed their inputs in order; all succeeded."
	b.ReportAllocs()
	start := processCPU()
	var n int
	for b.Loop() {
		entries, prev := bld.Compaction(msgs)
		if len(entries) == 0 {
			b.Fatalf("no compaction due at step %d", wf.Step)
		}
		r, err := bld.Compact(CompactInput{Workflow: wf, Messages: msgs, Entries: entries, Previous: prev})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, problem := ParseSummary(reply, bld.SummaryLimit()); problem != "" {
			b.Fatal(problem)
		}
		n = len(r.Messages[len(r.Messages)-1].Content)
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n), "prompt-bytes")
}
