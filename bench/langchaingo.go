package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// Langchaingo runs the task with langchaingo's agents executor over its
// one-shot (MRKL) agent: per step one model call on the rendered prompt
// with the scratchpad of earlier steps, the reply parsed for an action or
// the final answer, and the tool called. Nothing is persisted or traced.
type Langchaingo struct {
	exec  *agents.Executor
	model *lcModel
	log   *echoLog
	res   Result
}

// NewLangchaingo builds the executor with the echo tool, its model scripted
// for task.
func NewLangchaingo(task Task) *Langchaingo {
	l := &Langchaingo{model: newLCModel(task), log: &echoLog{}}
	agent := agents.NewOneShotAgent(l.model, []tools.Tool{lcEcho{l.log}})
	l.exec = agents.NewExecutor(agent, agents.WithMaxIterations(task.Steps()+1))
	return l
}

// Run runs the executor once.
func (l *Langchaingo) Run(ctx context.Context) error {
	l.model.n = 0
	out, err := chains.Call(ctx, l.exec, map[string]any{"input": Prompt})
	l.res = Result{Inputs: l.log.take(), ModelCalls: l.model.n}
	if err != nil {
		return err
	}
	l.res.Answer, _ = out["output"].(string)
	return nil
}

// Result returns the last run's outcome.
func (l *Langchaingo) Result(context.Context) (Result, error) { return l.res, nil }

// Forget does nothing: the executor keeps nothing between runs.
func (l *Langchaingo) Forget(context.Context) error { return nil }

// Close does nothing.
func (l *Langchaingo) Close(context.Context) error { return nil }

// lcModel is an instant llms.Model answering from a precomputed script by
// call number within the run.
type lcModel struct {
	n      int
	script []string
}

var _ llms.Model = (*lcModel)(nil)

func newLCModel(task Task) *lcModel {
	m := &lcModel{}
	for i := 1; i <= task.Calls; i++ {
		m.script = append(m.script, fmt.Sprintf("Thought: I should echo result %d.\nAction: echo\nAction Input: %s", i, ToolInput(i)))
	}
	m.script = append(m.script, "Thought: I now know the final answer\nFinal Answer: "+Answer)
	return m
}

// GenerateContent answers the next scripted reply.
func (m *lcModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if len(msgs) == 0 {
		return nil, errors.New("no prompt")
	}
	if m.n >= len(m.script) {
		return nil, errors.New("script exhausted")
	}
	reply := m.script[m.n]
	m.n++
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply}}}, nil
}

// Call answers the next scripted reply.
func (m *lcModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// lcEcho is the echo tool.
type lcEcho struct{ log *echoLog }

// Name is the tool's name in the prompt.
func (lcEcho) Name() string { return "echo" }

// Description is the tool's description in the prompt.
func (lcEcho) Description() string { return "Returns its text unchanged." }

// Call returns input.
func (e lcEcho) Call(_ context.Context, input string) (string, error) {
	e.log.add(input)
	return input, nil
}
