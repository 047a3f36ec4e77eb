package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

type eventsInput struct {
	WorkflowPath
	LastEventID string `header:"Last-Event-ID" maxLength:"20" doc:"Resume after this message seq"`
	Deltas      string `query:"deltas" enum:"all,none" doc:"none: no delta events (the pieces of an answer while it is written); all (default): send them"`
}

// eventsPage is how many messages one store read returns while streaming.
const eventsPage = 200

func (s *Server) registerEvents(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "workflowEvents", Method: http.MethodGet, Path: "/api/v1/workflows/{id}/events",
		Summary: "Server-Sent Events: message and status events until the round ends",
		Description: "Each `message` event carries a message and has the message's seq as its id, so a " +
			"reconnecting client (Last-Event-ID) gets only what it missed. `status` events carry the workflow. " +
			"The stream ends after the status event of a workflow that is no longer running, or after a " +
			"`deleted` event (data `{\"id\": ...}`) when the workflow is deleted while the stream is open. A round that " +
			"pauses for approval ends the stream with its status event and an `approval` event carrying the pending approval. " +
			"While a stage's reply streams, `delta` events (no id, not stored) carry `{round, step, stage, field, text}`: the next piece " +
			"of Stage 1's `actionObjective` or of the `message` of Stage 2's `workflow.complete`, from whichever instance runs the round. " +
			"A client that reads slowly loses deltas, never a message event: the committed message is the truth. `?deltas=none` turns them off.",
		Tags: []string{"events"}, Errors: []int{401, 404, 422},
	}, s.workflowEvents)
}

// registerAdminEvents adds the admin's event stream of any user's workflow,
// which the trace viewer follows to show a running round live.
func (s *Server) registerAdminEvents(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "adminWorkflowEvents", Method: http.MethodGet, Path: "/admin/v1/workflows/{id}/events",
		Summary: "Server-Sent Events of any user's workflow, as /api/v1/workflows/{id}/events sends them",
		Tags:    []string{"admin"}, Errors: []int{401, 403, 404, 422},
	}, func(ctx context.Context, in *eventsInput) (*huma.StreamResponse, error) {
		admin := s.reads.Admin()
		return s.events(ctx, in, "adminWorkflowEvents", streamReads{get: admin.Get, messages: admin.Messages})
	})
}

func (s *Server) workflowEvents(ctx context.Context, in *eventsInput) (*huma.StreamResponse, error) {
	user := UserFrom(ctx)
	return s.events(ctx, in, "workflowEvents", streamReads{
		get: func(ctx context.Context, id string) (*workflow.Workflow, error) { return s.reads.Get(ctx, user, id) },
		messages: func(ctx context.Context, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error) {
			return s.reads.Messages(ctx, user, id, after, limit)
		},
	})
}

// streamReads are the reads of one event stream, in one scope: the
// caller's own workflow, or any for an admin.
type streamReads struct {
	get      func(ctx context.Context, id string) (*workflow.Workflow, error)
	messages func(ctx context.Context, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
}

// events checks the workflow with reads.get and streams it.
func (s *Server) events(ctx context.Context, in *eventsInput, op string, reads streamReads) (*huma.StreamResponse, error) {
	var after int64
	if in.LastEventID != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(in.LastEventID), 10, 64)
		if err != nil || n < 0 {
			return nil, invalid("header.Last-Event-ID", "must be the non-negative seq of the last message event received", in.LastEventID)
		}
		after = n
	}
	if _, err := reads.get(ctx, in.ID); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		hctx.SetHeader("Content-Type", "text/event-stream")
		hctx.SetHeader("Cache-Control", "no-store")
		hctx.SetHeader("X-Accel-Buffering", "no")
		hctx.SetStatus(http.StatusOK)
		st := &eventStream{w: hctx.BodyWriter(), after: after, writeWait: s.writeWait, deltas: in.Deltas != "none"}
		if err := s.stream(hctx.Context(), reads, in.ID, st); err != nil && hctx.Context().Err() == nil {
			zerolog.Ctx(ctx).Warn().Err(err).Str("workflow", in.ID).Msg("event stream ended early")
		}
	}}, nil
}

// stream reads the store until the workflow is no longer running, the
// client leaves, the workflow disappears or the server shuts down: at once
// after each commit of it on this instance (a published change), and every
// poll for commits elsewhere. Reading the workflow before its messages
// (reads.messages) guarantees that when a terminal status is seen, every
// message committed with it has been sent.
func (s *Server) stream(ctx context.Context, reads streamReads, id string, st *eventStream) error {
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	changed, cancel := s.changes.Subscribe(id)
	defer cancel()
	var deltas <-chan workflow.Delta
	if st.deltas && s.deltas != nil {
		var stop func()
		deltas, stop = s.deltas.SubscribeDeltas(id)
		defer stop()
	}
	if err := st.write("retry: 2000\n\n"); err != nil {
		return err
	}
	for {
		// Deltas already waiting precede the commit that follows them.
		if err := drainDeltas(st, deltas); err != nil {
			return err
		}
		w, err := s.sendNewMessages(ctx, reads, id, st)
		if err != nil {
			if workflow.KindOf(err) == workflow.KindNotFound {
				// Deleted while streaming: say so, so a client does not
				// take the end for a dropped connection and reconnect.
				return st.write(fmt.Sprintf("event: deleted\ndata: {\"id\":%q}\n\n", id))
			}
			return err
		}
		if err := st.status(w); err != nil {
			return err
		}
		if err := st.approval(w); err != nil {
			return err
		}
		if w.Status != workflow.StatusRunning {
			return nil
		}
		if time.Since(st.lastWrite) >= s.heartbeat {
			if err := st.write(": heartbeat\n\n"); err != nil {
				return err
			}
		}
		if done, err := s.awaitChange(ctx, st, changed, ticker.C, deltas); done || err != nil {
			return err
		}
	}
}

// drainDeltas sends the deltas waiting in deltas without blocking.
func drainDeltas(st *eventStream, deltas <-chan workflow.Delta) error {
	for {
		select {
		case d := <-deltas:
			if err := st.delta(d); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// awaitChange sends the deltas that arrive until a commit is heard of or
// the poll ticks (false: read the store again), or the stream must end
// (true).
func (s *Server) awaitChange(ctx context.Context, st *eventStream, changed <-chan workflow.Change, tick <-chan time.Time, deltas <-chan workflow.Delta) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-s.closing:
			return true, nil
		case <-changed:
			return false, nil
		case <-tick:
			return false, nil
		case d := <-deltas:
			if err := st.delta(d); err != nil {
				return true, err
			}
		}
	}
}

// sendNewMessages sends the messages after the last one sent, a page at a
// time, and returns the workflow as it was read before the first page.
func (s *Server) sendNewMessages(ctx context.Context, reads streamReads, id string, st *eventStream) (*workflow.Workflow, error) {
	var first *workflow.Workflow
	for {
		w, msgs, err := reads.messages(ctx, id, st.after, eventsPage)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = w
		}
		for _, m := range msgs {
			if err := st.message(m); err != nil {
				return nil, err
			}
		}
		if len(msgs) < eventsPage {
			return first, nil
		}
	}
}

// eventStream writes SSE frames and remembers what it has sent.
type eventStream struct {
	w         io.Writer
	after     int64
	lastKey   string
	lastWrite time.Time
	// lastApproval is the id of the last approval event sent.
	lastApproval string
	// deltas is whether delta events are sent.
	deltas bool
	// writeWait bounds each frame's write, so a client that stops reading
	// ends the stream instead of holding it forever.
	writeWait time.Duration
}

func (st *eventStream) message(m workflow.Message) error {
	data, err := json.Marshal(viewMessage(m))
	if err != nil {
		return err
	}
	if err := st.write(fmt.Sprintf("id: %d\nevent: message\ndata: %s\n\n", m.Seq, data)); err != nil {
		return err
	}
	st.after = m.Seq
	return nil
}

// status sends the workflow when anything visible changed since the last
// status event. Status events carry no id, so Last-Event-ID keeps naming
// the last message.
func (st *eventStream) status(w *workflow.Workflow) error {
	key := fmt.Sprintf("%s|%s|%d|%d|%s", w.Status, w.StopReason, w.Round, w.Step, w.UpdatedAt.Format(time.RFC3339Nano))
	if key == st.lastKey {
		return nil
	}
	data, err := json.Marshal(viewWorkflow(w))
	if err != nil {
		return err
	}
	if err := st.write("event: status\ndata: " + string(data) + "\n\n"); err != nil {
		return err
	}
	st.lastKey = key
	return nil
}

// approval sends a paused round's pending approval once, as an approval
// event (after the status event that says the round is paused).
func (st *eventStream) approval(w *workflow.Workflow) error {
	p := w.PendingApproval
	if w.Status != workflow.StatusAwaitingApproval || p == nil || p.ID == st.lastApproval {
		return nil
	}
	data, err := json.Marshal(viewPending(p))
	if err != nil {
		return err
	}
	if err := st.write("event: approval\ndata: " + string(data) + "\n\n"); err != nil {
		return err
	}
	st.lastApproval = p.ID
	return nil
}

// delta sends a piece of a streaming reply: no id, so Last-Event-ID keeps
// naming the last message. Only the fields apiv1.Delta names are sent
// (the raw Stage 2 reply, field parameters, is AG-UI's alone).
func (st *eventStream) delta(d workflow.Delta) error {
	if d.Field != "actionObjective" && d.Field != "message" {
		return nil
	}
	data, err := json.Marshal(apiv1.Delta{Round: d.Round, Step: d.Step, Stage: string(d.Stage), Field: d.Field, Text: d.Text})
	if err != nil {
		return err
	}
	return st.write("event: delta\ndata: " + string(data) + "\n\n")
}

func (st *eventStream) write(frame string) error {
	if rw, ok := st.w.(http.ResponseWriter); ok && st.writeWait > 0 {
		_ = http.NewResponseController(rw).SetWriteDeadline(time.Now().Add(st.writeWait))
	}
	if _, err := io.WriteString(st.w, frame); err != nil {
		return err
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
	st.lastWrite = time.Now()
	return nil
}
