package a2a

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// A task is one round of a workflow: its id is "<workflow id>.<round>".

// taskID returns the id of round of workflow wfID.
func taskID(wfID string, round int) string { return wfID + "." + strconv.Itoa(round) }

// parseTaskID splits a task id; ok is false for one no workflow's round
// could have (answered "task not found", as another user's).
func parseTaskID(id string) (wfID string, round int, ok bool) {
	wfID, r, found := strings.Cut(id, ".")
	if !found || !workflow.ValidID(workflow.PrefixWorkflow, wfID) {
		return "", 0, false
	}
	round, err := strconv.Atoi(r)
	if err != nil || round < 1 || strconv.Itoa(round) != r {
		return "", 0, false
	}
	return wfID, round, true
}

// view says what a task shows besides its status: at most History
// messages of its history (nil: all), and its artifacts.
type view struct {
	History   *int
	Artifacts bool
}

// roundState is the A2A state of round in wf, with the agent's status
// message, given the round's messages. The current round's state is the
// workflow's status; an earlier round ended: completed when it closed
// with an answer, failed otherwise.
func roundState(wf *workflow.Workflow, round int, msgs []workflow.Message) (string, *Message) {
	if round < wf.Round {
		if answerOf(msgs, round) != nil {
			return StateCompleted, nil
		}
		return StateFailed, nil
	}
	switch wf.Status {
	case workflow.StatusAwaitingApproval:
		return StateInputRequired, approvalMessage(wf)
	case workflow.StatusCompleted:
		return StateCompleted, nil
	case workflow.StatusFailed:
		return StateFailed, agentText(wf, round, "failed: "+wf.Error)
	case workflow.StatusStopped:
		return StateCanceled, nil
	}
	return StateWorking, nil
}

// terminal reports whether a task in state will not change any more.
func terminal(state string) bool {
	return state == StateCompleted || state == StateFailed || state == StateCanceled || state == StateRejected
}

// settled reports whether a waiting caller has its answer: terminal or
// waiting for input.
func settled(state string) bool { return terminal(state) || state == StateInputRequired }

// taskOf is round of wf as a task; msgs are the workflow's messages
// (every round's, or just this one's).
func taskOf(base string, wf *workflow.Workflow, round int, msgs []workflow.Message, v view) Task {
	state, msg := roundState(wf, round, msgs)
	t := Task{ID: taskID(wf.ID, round), ContextID: wf.ID, Status: TaskStatus{State: state, Message: msg, Timestamp: stamp(wf, round, msgs)}}
	if v.Artifacts {
		t.Artifacts = artifactsOf(base, wf.ID, round, msgs)
	}
	t.History = historyOf(wf.ID, round, msgs, v.History)
	return t
}

// stamp is when the round last changed: the workflow's update for the
// current round, the round's last message for an earlier one.
func stamp(wf *workflow.Workflow, round int, msgs []workflow.Message) string {
	at := wf.UpdatedAt
	if round < wf.Round {
		for _, m := range msgs {
			if m.Round == round {
				at = m.CreatedAt
			}
		}
	}
	return at.UTC().Format(time.RFC3339Nano)
}

// answerOf returns the round's answer: its last assistant message.
func answerOf(msgs []workflow.Message, round int) *workflow.Message {
	var out *workflow.Message
	for i := range msgs {
		if msgs[i].Round == round && msgs[i].Role == workflow.RoleAssistant {
			out = &msgs[i]
		}
	}
	return out
}

// artifactsOf returns the round's artifacts: the answer as a text part
// (artifact "answer"), then each document its actions produced as a file
// part pointing at the download route.
func artifactsOf(base, wfID string, round int, msgs []workflow.Message) []Artifact {
	var out []Artifact
	if a := answerOf(msgs, round); a != nil {
		out = append(out, Artifact{ArtifactID: a.ID, Name: "answer", Parts: []Part{{Text: a.Text, MediaType: "text/plain"}}})
	}
	for _, m := range msgs {
		if m.Round != round || m.Role != workflow.RoleAction {
			continue
		}
		for _, d := range m.Documents {
			out = append(out, Artifact{ArtifactID: d.ID, Name: d.Name, Description: m.Action + " produced it",
				Parts: []Part{{URL: documentURL(base, wfID, d.ID), Filename: d.Name, MediaType: d.MimeType}}})
		}
	}
	return out
}

// documentURL is a document's download route (it takes the same token).
func documentURL(base, wfID, docID string) string {
	return base + "/api/v1/workflows/" + url.PathEscape(wfID) + "/documents/" + url.PathEscape(docID)
}

// historyOf returns the round's conversation: the caller's messages and
// the answer, the last limit of them (nil: all; 0: none).
func historyOf(wfID string, round int, msgs []workflow.Message, limit *int) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Round != round || (m.Role != workflow.RoleUser && m.Role != workflow.RoleAssistant) {
			continue
		}
		role := RoleUser
		if m.Role == workflow.RoleAssistant {
			role = RoleAgent
		}
		out = append(out, Message{MessageID: m.ID, ContextID: wfID, TaskID: taskID(wfID, round), Role: role, Parts: []Part{{Text: m.Text}}})
	}
	if limit != nil && len(out) > max(*limit, 0) {
		out = out[len(out)-max(*limit, 0):]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// agentText is an agent message about round of wf carrying text.
func agentText(wf *workflow.Workflow, round int, text string) *Message {
	return &Message{MessageID: wf.ID + ".status." + strconv.FormatInt(wf.Version, 10), ContextID: wf.ID,
		TaskID: taskID(wf.ID, round), Role: RoleAgent, Parts: []Part{{Text: text}}}
}

// approvalRequest is the data part of an input-required status: the
// pending approval the caller answers.
type approvalRequest struct {
	ApprovalID        string               `json:"approvalId"`
	Kind              string               `json:"kind"`
	Action            string               `json:"action"`
	ActionObjective   string               `json:"actionObjective"`
	Parameters        map[string]any       `json:"parameters"`
	Effect            string               `json:"effect"`
	ParametersContext string               `json:"parametersContext,omitempty"`
	Fields            []workflow.FieldSpec `json:"fields,omitempty"`
	ExpiresAt         time.Time            `json:"expiresAt,omitzero"`
	Answer            string               `json:"answer"`
}

// answerHint says how to answer an approval.
const answerHint = `send a message with this task's taskId whose data part is {"decision":"approve"} or ` +
	`{"decision":"reject","comment":"why"}; approve may carry edited "parameters" (a call) or "constraints" (an intent)`

// approvalMessage is the status message of a round awaiting approval: a
// text part saying what waits and how to answer, and the data part.
func approvalMessage(wf *workflow.Workflow) *Message {
	p := wf.PendingApproval
	if p == nil {
		return nil
	}
	data, _ := json.Marshal(approvalRequest{ApprovalID: p.ID, Kind: string(p.KindOrCall()), Action: p.Action,
		ActionObjective: p.ActionObjective, Parameters: p.Parameters, Effect: string(p.Effect),
		ParametersContext: p.ParametersContext, Fields: p.Fields, ExpiresAt: p.ExpiresAt, Answer: answerHint})
	m := agentText(wf, wf.Round, "Step "+strconv.Itoa(p.Step)+" wants to run "+p.Action+" ("+string(p.Effect)+
		") and waits for your approval: "+answerHint+".")
	m.Parts = append(m.Parts, Part{Data: data, MediaType: "application/json"})
	return m
}
