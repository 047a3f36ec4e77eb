package a2a

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/twostep/twostep/workflow"
)

// maxListPage bounds ListTasks' page size.
const maxListPage = 100

// loadTask reads task id of the caller: its workflow, round and the
// workflow's messages. An unknown, malformed or another user's id is
// "task not found".
func (s *Server) loadTask(c *call, id string) (*workflow.Workflow, int, []workflow.Message, error) {
	wfID, round, ok := parseTaskID(id)
	if !ok {
		return nil, 0, nil, taskNotFound(id)
	}
	wf, err := s.opts.Reads.Get(c.ctx, c.user, wfID)
	if workflow.KindOf(err) == workflow.KindNotFound || err == nil && round > wf.Round {
		return nil, 0, nil, taskNotFound(id)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
	if workflow.KindOf(err) == workflow.KindNotFound {
		return nil, 0, nil, taskNotFound(id)
	}
	return wf, round, msgs, err
}

func (s *Server) getTask(c *call, params json.RawMessage) (any, error) {
	var in taskRequest
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	if in.HistoryLength != nil && *in.HistoryLength < 0 {
		return nil, invalidParams("historyLength must not be negative")
	}
	wf, round, msgs, err := s.loadTask(c, in.ID)
	if err != nil {
		return nil, err
	}
	return taskOf(c.base, wf, round, msgs, view{History: in.HistoryLength, Artifacts: true}), nil
}

// cancelTask stops the task's round: the workflow's Stop. A round that
// already ended (or an earlier round) is not cancelable.
func (s *Server) cancelTask(c *call, params json.RawMessage) (any, error) {
	var in taskRequest
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	wf, round, msgs, err := s.loadTask(c, in.ID)
	if err != nil {
		return nil, err
	}
	if state, _ := roundState(wf, round, msgs); terminal(state) {
		return nil, newError(codeTaskNotCancelable, "task "+quote(in.ID)+" is "+state+": only a working or input-required task can be canceled")
	}
	stopped, err := s.opts.Engine.Stop(c.ctx, c.user, wf.ID)
	switch workflow.KindOf(err) {
	case "":
	case workflow.KindConflict:
		return nil, newError(codeTaskNotCancelable, "task "+quote(in.ID)+" ended before it could be canceled")
	case workflow.KindNotFound:
		return nil, taskNotFound(in.ID)
	default:
		return nil, err
	}
	return taskOf(c.base, stopped, round, msgs, view{Artifacts: true}), nil
}

// listTasks lists the caller's tasks: with a contextId every round of
// that workflow (newest first), else each workflow's latest round, a page
// of workflows at a time (the workflow list's order and cursor).
func (s *Server) listTasks(c *call, params json.RawMessage) (any, error) {
	var in listTasksRequest
	if len(params) > 0 {
		if err := json.Unmarshal(params, &in); err != nil {
			return nil, invalidParams("params are invalid: " + err.Error())
		}
	}
	size, keep, err := listFilter(in)
	if err != nil {
		return nil, err
	}
	v := view{History: in.HistoryLength, Artifacts: in.IncludeArtifacts}
	if v.History == nil {
		v.History = new(int) // none unless asked
	}
	if in.ContextID != "" {
		return s.listContext(c, in.ContextID, v, keep)
	}
	wfs, next, err := s.opts.Reads.List(c.ctx, c.user, workflow.Page{Limit: size, Cursor: in.PageToken})
	if workflow.KindOf(err) == workflow.KindInvalid {
		return nil, invalidParams("pageToken is not one this server gave")
	}
	if err != nil {
		return nil, err
	}
	out := listTasksResponse{Tasks: []Task{}, NextPageToken: next, PageSize: size}
	for _, wf := range wfs {
		msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
		if err != nil {
			continue // deleted meanwhile
		}
		if t := taskOf(c.base, wf, wf.Round, msgs, v); keep(t) {
			out.Tasks = append(out.Tasks, t)
		}
	}
	out.TotalSize = len(out.Tasks)
	return out, nil
}

// listFilter checks ListTasks' page size and filters: the size and
// which tasks to keep (status, statusTimestampAfter).
func listFilter(in listTasksRequest) (int, func(Task) bool, error) {
	size := 50
	if in.PageSize != nil {
		if *in.PageSize < 1 || *in.PageSize > maxListPage {
			return 0, nil, invalidParams("pageSize must be between 1 and " + strconv.Itoa(maxListPage))
		}
		size = *in.PageSize
	}
	if in.Status != "" && !knownState(in.Status) {
		return 0, nil, invalidParams("status " + quote(in.Status) + " is not a TASK_STATE_* value")
	}
	var after time.Time
	if in.StatusTimestampAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, in.StatusTimestampAfter)
		if err != nil {
			return 0, nil, invalidParams("statusTimestampAfter must be an RFC 3339 time such as 2026-12-01T09:00:00Z")
		}
		after = t
	}
	return size, func(t Task) bool {
		at, _ := time.Parse(time.RFC3339Nano, t.Status.Timestamp)
		return (in.Status == "" || t.Status.State == in.Status) && (after.IsZero() || at.After(after))
	}, nil
}

// listContext lists every round of one workflow, newest first.
func (s *Server) listContext(c *call, context string, v view, keep func(Task) bool) (any, error) {
	out := listTasksResponse{Tasks: []Task{}}
	wf, err := s.opts.Reads.Get(c.ctx, c.user, context)
	if workflow.KindOf(err) == workflow.KindNotFound {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
	if err != nil {
		return nil, err
	}
	for r := wf.Round; r >= 1; r-- {
		if t := taskOf(c.base, wf, r, msgs, v); keep(t) {
			out.Tasks = append(out.Tasks, t)
		}
	}
	out.PageSize, out.TotalSize = len(out.Tasks), len(out.Tasks)
	return out, nil
}

func knownState(s string) bool {
	switch s {
	case StateSubmitted, StateWorking, StateCompleted, StateFailed, StateCanceled, StateInputRequired, StateRejected:
		return true
	}
	return false
}
