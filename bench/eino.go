package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// Eino runs the task with Eino's ReAct agent (a compiled graph of a chat
// model node and a tools node): per step one model call on the message
// list, a branch on the reply's tool calls, and the tool called with its
// JSON arguments decoded into a struct. Nothing is persisted or traced.
type Eino struct {
	agent *react.Agent
	model *einoModel
	log   *echoLog
	res   Result
}

// echoArgs are the echo tool's arguments.
type echoArgs struct {
	Text string `json:"text" jsonschema:"description=the text"`
}

// NewEino compiles the agent with the echo tool, its model scripted for task.
func NewEino(ctx context.Context, task Task) (*Eino, error) {
	e := &Eino{model: newEinoModel(task), log: &echoLog{}}
	echo, err := utils.InferTool("echo", "Returns its text unchanged.", func(_ context.Context, in echoArgs) (string, error) {
		e.log.add(in.Text)
		return in.Text, nil
	})
	if err != nil {
		return nil, err
	}
	e.agent, err = react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: e.model,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{echo}},
		MaxStep:          2*task.Steps() + 2,
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Run runs the agent once.
func (e *Eino) Run(ctx context.Context) error {
	e.model.n = 0
	msg, err := e.agent.Generate(ctx, []*schema.Message{schema.UserMessage(Prompt)})
	e.res = Result{Inputs: e.log.take(), ModelCalls: e.model.n}
	if err != nil {
		return err
	}
	e.res.Answer = msg.Content
	return nil
}

// Result returns the last run's outcome.
func (e *Eino) Result(context.Context) (Result, error) { return e.res, nil }

// Forget does nothing: the agent keeps nothing between runs.
func (e *Eino) Forget(context.Context) error { return nil }

// Close does nothing.
func (e *Eino) Close(context.Context) error { return nil }

// einoModel is an instant tool-calling chat model answering from a
// precomputed script by call number within the run.
type einoModel struct {
	n         int
	ids, args []string
}

var _ model.ToolCallingChatModel = (*einoModel)(nil)

func newEinoModel(task Task) *einoModel {
	m := &einoModel{}
	for i := 1; i <= task.Calls; i++ {
		m.ids = append(m.ids, fmt.Sprintf("call_%d", i))
		m.args = append(m.args, fmt.Sprintf(`{"text":%q}`, ToolInput(i)))
	}
	return m
}

// Generate answers the next scripted reply: a tool call, or the answer.
func (m *einoModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if len(in) == 0 {
		return nil, errors.New("no input")
	}
	n := m.n
	m.n++
	switch {
	case n < len(m.args):
		return schema.AssistantMessage("", []schema.ToolCall{{
			ID: m.ids[n], Type: "function",
			Function: schema.FunctionCall{Name: "echo", Arguments: m.args[n]},
		}}), nil
	case n == len(m.args):
		return schema.AssistantMessage(Answer, nil), nil
	}
	return nil, errors.New("script exhausted")
}

// Stream answers the next scripted reply as a one-chunk stream.
func (m *einoModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// WithTools returns m: the script does not depend on the tools.
func (m *einoModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }
