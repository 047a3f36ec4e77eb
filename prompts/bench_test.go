package prompts

import (
	"fmt"
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
