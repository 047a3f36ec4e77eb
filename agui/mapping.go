package agui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// message sends a committed message of the run's round: an action step
// as a step around a tool call and its result, an answer as a text
// message (ending the one its deltas began).
func (f *follower) message(m workflow.Message) error {
	k := stepKey{m.Round, m.Step}
	f.done[k] = true
	switch m.Role {
	case workflow.RoleAction:
		return f.actionMessage(k, m)
	case workflow.RoleAssistant:
		return f.answer(k, m)
	}
	return nil
}

// actionMessage sends an action step: the tool call (unless its deltas
// began it, or the run before sent it and paused on its approval), the
// result, the step's end.
func (f *follower) actionMessage(k stepKey, m workflow.Message) error {
	if err := f.closeText(); err != nil {
		return err
	}
	switch {
	case k == stepKey(f.plan.resumedCall):
		if err := f.openStep(k, m.Action); err != nil {
			return err
		}
	case f.tool != nil && f.tool.key == k:
		if err := f.endTool(""); err != nil {
			return err
		}
	default:
		if err := f.startTool(k, m.Action); err != nil {
			return err
		}
		if err := f.endTool(argsOf(m.Parameters)); err != nil {
			return err
		}
	}
	content := m.Text
	if err := f.out.send(Event{Type: ToolCallResult, MessageID: m.ID, ToolCallID: f.callID(k), Content: &content, Role: "tool"}); err != nil {
		return err
	}
	return f.closeStep()
}

// answer sends an assistant message: the rest of the text its deltas
// began (the committed text is the truth), or all of it.
func (f *follower) answer(k stepKey, m workflow.Message) error {
	if err := f.closeTool(); err != nil {
		return err
	}
	if f.text == nil || f.text.key != k {
		if err := f.closeText(); err != nil {
			return err
		}
		f.text = &open{key: k, id: m.ID}
		if err := f.out.send(Event{Type: TextMessageStart, MessageID: m.ID, Role: "assistant"}); err != nil {
			return err
		}
	}
	if rest, ok := strings.CutPrefix(m.Text, f.text.sent); ok && rest != "" {
		if err := f.out.send(Event{Type: TextMessageContent, MessageID: f.text.id, Delta: rest}); err != nil {
			return err
		}
	}
	return f.closeText()
}

// delta sends a piece of a streaming reply of the run's round: the
// answer's text, or a tool call's arguments. Stage 1's actionObjective
// is not an AG-UI event.
func (f *follower) delta(ctx context.Context, d workflow.Delta) error {
	k := stepKey{d.Round, d.Step}
	if d.Round != f.plan.round || d.Step < f.plan.fromStep || f.done[k] || d.Text == "" {
		return nil
	}
	switch d.Field {
	case "message":
		if f.text == nil || f.text.key != k {
			if err := f.closeTool(); err != nil {
				return err
			}
			if err := f.closeText(); err != nil {
				return err
			}
			f.text = &open{key: k, id: f.answerID(k)}
			if err := f.out.send(Event{Type: TextMessageStart, MessageID: f.text.id, Role: "assistant"}); err != nil {
				return err
			}
		}
		f.text.sent += d.Text
		return f.out.send(Event{Type: TextMessageContent, MessageID: f.text.id, Delta: d.Text})
	case "parameters":
		return f.argsDelta(ctx, k, d.Text)
	}
	return nil
}

// argsDelta sends a piece of Stage 2's parameters as TOOL_CALL_ARGS,
// beginning the step's tool call at the first (the action is read from
// the checkpoint). workflow.complete's parameters are the answer, sent
// as text from its message deltas instead.
func (f *follower) argsDelta(ctx context.Context, k stepKey, text string) error {
	if f.answerSteps[k] {
		return nil
	}
	if f.tool == nil || f.tool.key != k {
		w, err := f.h.eng.Get(ctx, f.user, f.plan.workflowID)
		if err != nil || w.Checkpoint == nil || w.Checkpoint.Selection == nil || w.Checkpoint.Step != k[1] {
			return nil // the committed message will carry it
		}
		if a := w.Checkpoint.Selection.Action; a == workflow.CompleteAction {
			f.answerSteps[k] = true
			return nil
		}
		if err := f.startTool(k, w.Checkpoint.Selection.Action); err != nil {
			return err
		}
	}
	f.tool.sent += text
	return f.out.send(Event{Type: ToolCallArgs, ToolCallID: f.tool.id, Delta: text})
}

// interrupt ends the run on the pending approval: a call's tool call is
// sent (its result comes in the resumed run), an intent names the call
// that will follow.
func (f *follower) interrupt(w *workflow.Workflow) error {
	p := w.PendingApproval
	k := stepKey{p.Round, p.Step}
	if err := f.closeText(); err != nil {
		return err
	}
	reason := "approval"
	if p.KindOrCall() == workflow.ApprovalIntent {
		reason = "intent"
	} else if f.tool == nil || f.tool.key != k {
		if err := f.closeTool(); err != nil {
			return err
		}
		if err := f.startTool(k, p.Action); err != nil {
			return err
		}
		if err := f.endTool(argsOf(p.Parameters)); err != nil {
			return err
		}
	} else if err := f.endTool(""); err != nil {
		return err
	}
	if err := f.closeAll(); err != nil {
		return err
	}
	if err := f.snapshot(w); err != nil {
		return err
	}
	in := Interrupt{ID: p.ID, Reason: reason, ToolCallID: f.callID(k), ResponseSchema: decisionSchema(reason),
		Message:  fmt.Sprintf("%s %s: %s", map[string]string{"approval": "Approve the call of", "intent": "Approve the intent to call"}[reason], p.Action, p.ActionObjective),
		Metadata: map[string]any{"workflowId": w.ID, "action": p.Action, "actionObjective": p.ActionObjective, "effect": p.Effect, "parameters": p.Parameters, "fields": p.Fields}}
	if !p.ExpiresAt.IsZero() {
		in.ExpiresAt = p.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return f.out.send(Event{Type: RunFinished, ThreadID: f.threadID, RunID: f.runID, Result: snapshotOf(w),
		Outcome: &Outcome{Type: "interrupt", Interrupts: []Interrupt{in}}})
}

// decisionSchema is the JSON Schema of a resume payload.
func decisionSchema(reason string) map[string]any {
	props := map[string]any{
		"decision": map[string]any{"type": "string", "enum": []string{"approve", "reject"}},
		"comment":  map[string]any{"type": "string", "maxLength": 2000},
		"remember": map[string]any{"type": "object", "properties": map[string]any{
			"scope": map[string]any{"type": "string", "enum": []string{"workflow", "user"}}, "ttl": map[string]any{"type": "string"}}},
	}
	if reason == "intent" {
		props["constraints"] = map[string]any{"type": "object", "description": "a JSON Schema fragment per field Stage 2 may fill"}
	} else {
		props["parameters"] = map[string]any{"type": "object", "description": "the edited parameters (on approve)"}
	}
	return map[string]any{"type": "object", "required": []string{"decision"}, "properties": props, "additionalProperties": false}
}

// argsOf is parameters as the tool call's arguments ("" for none).
func argsOf(params map[string]any) string {
	if len(params) == 0 {
		return ""
	}
	data, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	return string(data)
}
