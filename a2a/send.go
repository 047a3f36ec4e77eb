package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/workflow"
)

// maxMessageID bounds a messageId (it keys the idempotency store).
const maxMessageID = 200

// sendResult is SendMessage's result: the task.
type sendResult struct {
	Task Task `json:"task"`
}

// sendMessage takes a message and, unless configuration.returnImmediately,
// waits for its task to settle (completed, failed, canceled or input
// required) before answering it.
func (s *Server) sendMessage(c *call, params json.RawMessage) (any, error) {
	in, err := decodeSend(params)
	if err != nil {
		return nil, err
	}
	wf, round, err := s.accept(c, in)
	if err != nil {
		return nil, err
	}
	if in.Configuration == nil || !in.Configuration.ReturnImmediately {
		if wf, err = s.await(c, wf, round); err != nil {
			return nil, err
		}
	}
	msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
	if err != nil {
		return nil, err
	}
	var hist *int
	if in.Configuration != nil {
		hist = in.Configuration.HistoryLength
	}
	return sendResult{Task: taskOf(c.base, wf, round, msgs, view{History: hist, Artifacts: true})}, nil
}

// decodeSend decodes and checks a SendMessageRequest.
func decodeSend(params json.RawMessage) (SendMessageRequest, error) {
	var in SendMessageRequest
	if err := decodeParams(params, &in); err != nil {
		return in, err
	}
	m := in.Message
	switch {
	case m == nil:
		return in, invalidParams("message is required")
	case m.MessageID == "" || len(m.MessageID) > maxMessageID || !printable(m.MessageID):
		return in, invalidParams("message.messageId must be 1 to " + strconv.Itoa(maxMessageID) + " printable ASCII characters")
	case m.Role != RoleUser && m.Role != "":
		return in, invalidParams("message.role must be " + RoleUser)
	case len(m.Parts) == 0:
		return in, invalidParams("message.parts must not be empty")
	case in.Configuration != nil && in.Configuration.HistoryLength != nil && *in.Configuration.HistoryLength < 0:
		return in, invalidParams("configuration.historyLength must not be negative")
	}
	return in, nil
}

// accept does what the message asks, once per messageId: answer the
// approval of an input-required task (taskId), start a round of a
// context (contextId), or start a workflow. It returns the workflow and
// the task's round.
func (s *Server) accept(c *call, in SendMessageRequest) (*workflow.Workflow, int, error) {
	return s.once(c, in, func() (*workflow.Workflow, int, error) {
		m := in.Message
		if m.TaskID != "" {
			return s.answer(c, m)
		}
		var push *PushConfig
		if in.Configuration != nil {
			push = in.Configuration.TaskPushNotificationConfig
		}
		if m.ContextID != "" && push != nil {
			return nil, 0, unsupported("a push notification config is taken with the message that starts a context " +
				"(no contextId): it then covers every task of the context")
		}
		prompt, docs, data, err := inputOf(m)
		if err != nil {
			return nil, 0, err
		}
		if len(data) > 0 {
			return nil, 0, invalidParams("a data part answers an approval: send it with the taskId of an input-required task")
		}
		contents, err := s.limits.CheckRequest(prompt, docs)
		if err != nil {
			return nil, 0, err
		}
		if m.ContextID != "" {
			return s.startRound(c, m.ContextID, prompt, contents)
		}
		sub, err := s.subscription(push)
		if err != nil {
			return nil, 0, err
		}
		wf, err := s.opts.Engine.Create(c.ctx, engine.NewWorkflow{UserID: c.user, Prompt: prompt, Documents: contents, Webhook: sub})
		if err != nil {
			return nil, 0, err
		}
		return wf, wf.Round, nil
	})
}

// startRound starts the next round of context (a workflow).
func (s *Server) startRound(c *call, context, prompt string, docs []workflow.DocumentContent) (*workflow.Workflow, int, error) {
	if !workflow.ValidID(workflow.PrefixWorkflow, context) {
		return nil, 0, newError(codeTaskNotFound, "context "+quote(context)+" not found")
	}
	wf, err := s.opts.Engine.StartRound(c.ctx, c.user, context, engine.NewRound{Prompt: prompt, Documents: docs})
	switch workflow.KindOf(err) {
	case "":
		return wf, wf.Round, nil
	case workflow.KindNotFound:
		return nil, 0, newError(codeTaskNotFound, "context "+quote(context)+" not found")
	case workflow.KindConflict:
		return nil, 0, unsupported("context " + quote(context) + " has a task still working or waiting for input: " +
			"answer or cancel it first (" + workflow.PublicMessage(err) + ")")
	}
	return nil, 0, err
}

// inputOf splits a message's parts: the text parts joined into the
// prompt, the raw file parts as documents, the data parts.
func inputOf(m *Message) (string, []apiv1.DocumentInput, []json.RawMessage, error) {
	var texts []string
	var docs []apiv1.DocumentInput
	var data []json.RawMessage
	for i, p := range m.Parts {
		at := "message.parts[" + strconv.Itoa(i) + "]"
		switch {
		case p.Text != "":
			texts = append(texts, p.Text)
		case p.Raw != "":
			name := p.Filename
			if name == "" {
				name = "document-" + strconv.Itoa(i+1)
			}
			docs = append(docs, apiv1.DocumentInput{Name: name, MimeType: p.MediaType, Content: p.Raw})
		case p.URL != "":
			return "", nil, nil, invalidParams(at + ": a file part by url is not fetched: send its bytes as raw")
		case len(p.Data) > 0 && !bytes.Equal(p.Data, nullID):
			data = append(data, p.Data)
		default:
			return "", nil, nil, invalidParams(at + " is empty: a part carries text, raw, url or data")
		}
	}
	return strings.Join(texts, "\n\n"), docs, data, nil
}

// answer takes a message on an input-required task: its data part is the
// decision on the pending approval, checked as the approvals route
// checks it (a text part is its comment when the data has none).
func (s *Server) answer(c *call, m *Message) (*workflow.Workflow, int, error) {
	wfID, round, ok := parseTaskID(m.TaskID)
	if !ok {
		return nil, 0, taskNotFound(m.TaskID)
	}
	if m.ContextID != "" && m.ContextID != wfID {
		return nil, 0, invalidParams("message.contextId " + quote(m.ContextID) + " is not the context of task " + quote(m.TaskID))
	}
	wf, err := s.opts.Reads.Get(c.ctx, c.user, wfID)
	if workflow.KindOf(err) == workflow.KindNotFound || err == nil && round > wf.Round {
		return nil, 0, taskNotFound(m.TaskID)
	}
	if err != nil {
		return nil, 0, err
	}
	if round < wf.Round || wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval == nil {
		return nil, 0, unsupported("task " + quote(m.TaskID) + " is not waiting for input: send a message without taskId " +
			"(with its contextId) to start another task in the context")
	}
	prompt, docs, data, err := inputOf(m)
	if err != nil {
		return nil, 0, err
	}
	if len(data) != 1 || len(docs) > 0 {
		return nil, 0, invalidParams("the answer to an approval is one data part {decision, parameters?, constraints?} (and an optional text part)")
	}
	d, err := decisionOf(data[0], prompt)
	if err != nil {
		return nil, 0, err
	}
	next, err := s.opts.Engine.Decide(c.ctx, c.user, wfID, wf.PendingApproval.ID, d)
	if pp := (*engine.ParameterProblems)(nil); errors.As(err, &pp) {
		what := "the edited parameters are invalid"
		if pp.Body == "constraints" {
			what = "the constraints are invalid"
		}
		return nil, 0, &rpcError{Code: codeInvalidParams, Message: what + "; the approval is still pending: " + pp.Error(),
			Data: map[string]any{"problems": pp.Lines}}
	}
	if err != nil {
		return nil, 0, err
	}
	return next, round, nil
}

// maxComment bounds a decision's comment, as the approvals route does.
const maxComment = 2000

// decisionOf decodes a decision data part strictly and checks it with
// httpapi.DecisionOf.
func decisionOf(data json.RawMessage, text string) (workflow.Decision, error) {
	var b apiv1.DecisionBody
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return workflow.Decision{}, invalidParams("the data part must be an object {decision: approve|reject, parameters?, " +
			"constraints?, comment?, remember?}: " + err.Error())
	}
	if b.Comment == "" {
		b.Comment = text
	}
	if utf8.RuneCountInString(b.Comment) > maxComment {
		return workflow.Decision{}, invalidParams("the comment is longer than " + strconv.Itoa(maxComment) + " characters")
	}
	return httpapi.DecisionOf(b)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
