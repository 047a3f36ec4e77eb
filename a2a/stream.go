package a2a

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/twostep/twostep/workflow"
)

// await returns wf once round has settled (its status not running, or a
// later round started), read again from the store; or the latest read
// when the request ends or MaxWait passes first; task not found when the
// workflow was deleted meanwhile. This instance's commits are heard at
// once (Changes), another instance's every Poll.
func (s *Server) await(c *call, wf *workflow.Workflow, round int) (*workflow.Workflow, error) {
	changed, cancel := s.opts.Changes.Subscribe(wf.ID)
	defer cancel()
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	limit := time.NewTimer(s.opts.MaxWait)
	defer limit.Stop()
	for {
		if wf.Round > round || wf.Status != workflow.StatusRunning {
			return wf, nil
		}
		select {
		case <-c.ctx.Done():
			return wf, nil
		case <-limit.C:
			return wf, nil
		case <-s.closing:
			return wf, nil
		case <-changed:
		case <-poll.C:
		}
		next, err := s.opts.Reads.Get(c.ctx, c.user, wf.ID)
		if workflow.KindOf(err) == workflow.KindNotFound {
			return nil, taskNotFound(taskID(wf.ID, round))
		}
		if err == nil {
			wf = next
		}
	}
}

// eventStream writes a task's events as JSON-RPC responses in Server-Sent
// Events, each frame under its own write deadline.
type eventStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	id   json.RawMessage
	wait time.Duration
	// rest writes bare StreamResponses (the HTTP+JSON binding), not
	// JSON-RPC responses.
	rest bool
}

func (st *eventStream) send(ev StreamResponse) error {
	var v any = response{ID: st.id, Result: ev}
	if st.rest {
		v = ev // HTTP+JSON: the StreamResponse itself
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.frame("data: " + string(b) + "\n\n")
}

func (st *eventStream) frame(f string) error {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.wait))
	if _, err := st.w.Write([]byte(f)); err != nil {
		return err
	}
	return st.rc.Flush()
}

// sendStreamingMessage takes a message and streams its task: the task,
// a status update per step, the artifacts and the final status. The
// stream ends when the task is completed, failed, canceled or waits for
// input.
func (s *Server) sendStreamingMessage(c *call, params json.RawMessage, w http.ResponseWriter) error {
	in, err := decodeSend(params)
	if err != nil {
		return err
	}
	wf, round, err := s.accept(c, in)
	if err != nil {
		return err
	}
	return s.stream(c, w, wf, round)
}

// subscribeToTask streams a task that has not ended.
func (s *Server) subscribeToTask(c *call, params json.RawMessage, w http.ResponseWriter) error {
	var in taskRequest
	if err := decodeParams(params, &in); err != nil {
		return err
	}
	wf, round, msgs, err := s.loadTask(c, in.ID)
	if err != nil {
		return err
	}
	if state, _ := roundState(wf, round, msgs); terminal(state) {
		return unsupported("task " + quote(in.ID) + " is " + state + ": a task that ended cannot be subscribed to; GetTask reads it")
	}
	return s.stream(c, w, wf, round)
}

// stream writes round's events until it settles or the request ends.
func (s *Server) stream(c *call, w http.ResponseWriter, wf *workflow.Workflow, round int) error {
	msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &eventStream{w: w, rc: http.NewResponseController(w), id: c.id, wait: s.opts.WriteTimeout, rest: c.rest}
	t := taskOf(c.base, wf, round, msgs, view{Artifacts: true})
	if st.send(StreamResponse{Task: &t}) != nil || settled(t.Status.State) {
		return nil
	}
	// The first status update says where the working task stands; a
	// round that ends before the next read still showed one.
	if st.send(StreamResponse{StatusUpdate: workingUpdate(wf, round, msgs)}) != nil {
		return nil
	}
	changed, cancel := s.opts.Changes.Subscribe(wf.ID)
	defer cancel()
	poll, beat := time.NewTicker(s.opts.Poll), time.NewTicker(s.opts.Heartbeat)
	defer poll.Stop()
	defer beat.Stop()
	last := wf.Version
	for {
		select {
		case <-c.ctx.Done():
			return nil
		case <-s.closing:
			return nil
		case <-beat.C:
			if st.frame(": keep-alive\n\n") != nil {
				return nil
			}
			continue
		case <-changed:
		case <-poll.C:
		}
		next, err := s.opts.Reads.Get(c.ctx, c.user, wf.ID)
		if workflow.KindOf(err) == workflow.KindNotFound {
			// Deleted: its task is over, and no later read finds it.
			_ = st.send(StreamResponse{StatusUpdate: &StatusUpdate{TaskID: taskID(wf.ID, round), ContextID: wf.ID,
				Status: TaskStatus{State: StateCanceled, Message: agentText(wf, round, "the context was deleted")}}})
			return nil
		}
		if err != nil || next.Version == last {
			continue
		}
		last = next.Version
		done, err := s.update(c, st, next, round)
		if done || err != nil {
			return nil
		}
	}
}

// update writes what changed in round: a working status per step, or,
// once it settled, its artifacts and its final status. done reports the
// round settled.
func (s *Server) update(c *call, st *eventStream, wf *workflow.Workflow, round int) (done bool, err error) {
	msgs, err := s.opts.Reads.MessagesOf(c.ctx, c.user, wf, 0, 0)
	if err != nil {
		return false, err
	}
	t := taskOf(c.base, wf, round, msgs, view{Artifacts: true})
	if !settled(t.Status.State) {
		return false, st.send(StreamResponse{StatusUpdate: workingUpdate(wf, round, msgs)})
	}
	for i := range t.Artifacts {
		a := &ArtifactUpdate{TaskID: t.ID, ContextID: t.ContextID, Artifact: t.Artifacts[i], LastChunk: true}
		if err := st.send(StreamResponse{ArtifactUpdate: a}); err != nil {
			return true, err
		}
	}
	return true, st.send(StreamResponse{StatusUpdate: &StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}})
}

// workingUpdate is the status update of a working round: its step and
// what its last action did.
func workingUpdate(wf *workflow.Workflow, round int, msgs []workflow.Message) *StatusUpdate {
	return &StatusUpdate{TaskID: taskID(wf.ID, round), ContextID: wf.ID, Status: TaskStatus{State: StateWorking,
		Timestamp: stamp(wf, round, msgs),
		Message:   agentText(wf, round, "step "+strconv.Itoa(wf.Step)+" of at most "+strconv.Itoa(wf.MaxSteps)+progressOf(msgs, round))}}
}

// progressOf says what the round's last action did: ": <action> —
// <status>", or "" before its first action.
func progressOf(msgs []workflow.Message, round int) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Round == round && m.Role == workflow.RoleAction {
			return ": " + m.Action + " — " + string(m.Status)
		}
	}
	return ""
}
