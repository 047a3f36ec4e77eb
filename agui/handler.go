package agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/workflow"
)

// Engine is the part of *engine.Engine a run drives and reads; every
// method scopes its work to userID (another user's workflow is
// KindNotFound).
type Engine interface {
	Create(ctx context.Context, in engine.NewWorkflow) (*workflow.Workflow, error)
	StartRound(ctx context.Context, userID, id string, in engine.NewRound) (*workflow.Workflow, error)
	Get(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	Messages(ctx context.Context, userID, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
}

// Options wires a Handler. Engine and Threads are required.
type Options struct {
	Engine Engine
	// Threads keeps each user's thread → workflow map: pass the store
	// (both stores implement it).
	Threads workflow.IdempotencyStore
	// ThreadTTL is how long a thread is remembered after its first run
	// (0: 90 days); a later run of a forgotten thread starts a new
	// workflow.
	ThreadTTL time.Duration
	// MaxBodyBytes bounds a run's body (0: 8 MiB).
	MaxBodyBytes int64
}

// Handler serves POST /api/v1/agui.
type Handler struct {
	eng     Engine
	threads threads
	maxBody int64
}

// New validates opts and returns the handler; mount it with Mount.
func New(opts Options) (*Handler, error) {
	if opts.Engine == nil || opts.Threads == nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "agui.New: Engine and Threads are required")
	}
	keep := opts.ThreadTTL
	if keep <= 0 {
		keep = 90 * 24 * time.Hour
	}
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = 8 << 20
	}
	return &Handler{eng: opts.Engine, threads: threads{store: opts.Threads, keep: keep}, maxBody: maxBody}, nil
}

type runInput struct {
	Body RunAgentInput
}

// Mount registers the route on api (an httpapi.APIMount).
func (h *Handler) Mount(api huma.API, srv *httpapi.Server) {
	huma.Register(api, huma.Operation{
		OperationID: "aguiRun", Method: http.MethodPost, Path: "/api/v1/agui",
		Summary: "AG-UI: run the thread's workflow and stream AG-UI events",
		Description: "AG-UI 1.0 (docs/agui.md). An unknown threadId starts a workflow from the last user message, " +
			"a known one a round (while a round runs: forwardedProps.twostep.onBusy, as the rounds route's onBusy). " +
			"A run carrying resume decides the pending approval and continues the paused round. The answer is a " +
			"text/event-stream of AG-UI events: RUN_STARTED, STATE_SNAPSHOT, STEP_*, TOOL_CALL_*, TEXT_MESSAGE_*, and " +
			"RUN_FINISHED (outcome success, or interrupt for a pending approval) or RUN_ERROR (a failed round, an invalid resume).",
		Tags: []string{"agui"}, MaxBodyBytes: h.maxBody, Errors: []int{400, 401, 404, 409, 413, 422, 429},
		Responses: map[string]*huma.Response{"200": {
			Description: "A text/event-stream of AG-UI events, one JSON object per data line",
			Content:     map[string]*huma.MediaType{"text/event-stream": {Schema: eventsSchema(api)}},
		}},
	}, func(ctx context.Context, in *runInput) (*huma.StreamResponse, error) {
		return h.run(ctx, srv, &in.Body)
	})
}

// run starts or continues the thread's round and streams it.
func (h *Handler) run(ctx context.Context, srv *httpapi.Server, in *RunAgentInput) (*huma.StreamResponse, error) {
	user := httpapi.UserFrom(ctx)
	p, err := h.begin(ctx, srv, user, in)
	var re *runError
	if err != nil && !errors.As(err, &re) {
		var se huma.StatusError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, srv.Fail(ctx, "aguiRun", err)
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		hctx.SetHeader("Content-Type", "text/event-stream")
		hctx.SetHeader("Cache-Control", "no-store")
		hctx.SetHeader("X-Accel-Buffering", "no")
		hctx.SetStatus(http.StatusOK)
		out := &writer{w: hctx.BodyWriter(), wait: srv.WriteTimeout()}
		if out.send(Event{Type: RunStarted, ThreadID: in.ThreadID, RunID: in.RunID}) != nil {
			return
		}
		if re != nil {
			_ = out.send(Event{Type: RunError, Message: re.msg, Code: re.code})
			return
		}
		f := &follower{h: h, srv: srv, user: user, plan: p, out: out, threadID: in.ThreadID, runID: in.RunID}
		_ = f.follow(hctx.Context())
	}}, nil
}

// runError is a refusal sent as RUN_ERROR inside the stream (an invalid
// resume) rather than as an HTTP problem.
type runError struct{ code, msg string }

func (e *runError) Error() string { return e.msg }

// plan is what a run follows: the workflow, the round, and the step of
// that round from which its messages are this run's.
type plan struct {
	workflowID string
	round      int
	fromStep   int
	// resumedCall is the (round, step) of a call approval this run
	// decided: its tool call was sent by the run before.
	resumedCall [2]int
}

// begin finds or starts the thread's workflow and starts, queues or
// resumes its round.
func (h *Handler) begin(ctx context.Context, srv *httpapi.Server, user string, in *RunAgentInput) (plan, error) {
	opts, err := forwarded(in.Forwarded)
	if err != nil {
		return plan{}, err
	}
	id, token, err := h.threads.lookup(ctx, user, in.ThreadID)
	if err != nil {
		return plan{}, err
	}
	if len(in.Resume) > 0 {
		if token != "" {
			h.threads.forget(user, in.ThreadID, token)
			return plan{}, &runError{code: "unknown_interrupt", msg: "this thread has no pending interrupt: it has not run yet"}
		}
		return h.resume(ctx, srv, user, id, in.Resume)
	}
	prompt := lastUserText(in.Messages)
	if err := srv.CheckPrompt(prompt); err != nil {
		h.release(user, in.ThreadID, token)
		return plan{}, err
	}
	docs, err := srv.DecodeDocuments(opts.docs)
	if err != nil {
		h.release(user, in.ThreadID, token)
		return plan{}, err
	}
	if token != "" {
		return h.create(ctx, user, in.ThreadID, token, prompt, docs, opts)
	}
	w, err := h.eng.StartRound(ctx, user, id, engine.NewRound{Prompt: prompt, Documents: docs, OnBusy: workflow.OnBusy(opts.OnBusy)})
	if err != nil {
		return plan{}, err
	}
	round := w.Round
	if n := len(w.QueuedRounds); n > 0 {
		// Queued: interrupt puts this round first, enqueue last.
		round += n
		if opts.OnBusy == string(workflow.OnBusyInterrupt) {
			round = w.Round + 1
		}
	}
	return plan{workflowID: w.ID, round: round}, nil
}

// release forgets a thread claim that made no workflow (token "": none).
func (h *Handler) release(user, threadID, token string) {
	if token != "" {
		h.threads.forget(user, threadID, token)
	}
}

// create starts the workflow of a new thread and remembers it.
func (h *Handler) create(ctx context.Context, user, threadID, token, prompt string, docs []workflow.DocumentContent, o options) (plan, error) {
	w, err := h.eng.Create(ctx, engine.NewWorkflow{UserID: user, Prompt: prompt, Mode: workflow.ModeName(o.Mode), MaxSteps: o.MaxSteps, Documents: docs})
	if err != nil {
		h.threads.forget(user, threadID, token)
		return plan{}, err
	}
	if err := h.threads.remember(ctx, user, threadID, token, w.ID); err != nil {
		return plan{}, err
	}
	return plan{workflowID: w.ID, round: w.Round}, nil
}

// options is forwardedProps.twostep, checked.
type options struct {
	Twostep
	docs []apiv1.DocumentInput
}

// forwarded reads forwardedProps.twostep (absent: the defaults).
func forwarded(raw json.RawMessage) (options, error) {
	var o options
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	var props struct {
		Twostep *Twostep `json:"twostep"`
	}
	if err := json.Unmarshal(raw, &props); err != nil || props.Twostep == nil {
		// forwardedProps is the client's: anything but twostep is not ours.
		return o, nil
	}
	o.Twostep = *props.Twostep
	bad := func(field, msg string) error {
		return huma.Error422UnprocessableEntity("invalid forwardedProps.twostep",
			&huma.ErrorDetail{Location: "body.forwardedProps.twostep." + field, Message: msg})
	}
	switch o.Mode {
	case "", string(workflow.ModeReact), string(workflow.ModeActionPlan):
	default:
		return o, bad("mode", fmt.Sprintf("unknown mode %q (react or actionplan)", o.Mode))
	}
	switch workflow.OnBusy(o.OnBusy) {
	case "", workflow.OnBusyReject, workflow.OnBusyEnqueue, workflow.OnBusyInterrupt:
	default:
		return o, bad("onBusy", "must be reject, enqueue or interrupt")
	}
	if o.MaxSteps < 0 {
		return o, bad("maxSteps", "must not be negative")
	}
	if len(o.Documents) > 0 {
		if err := json.Unmarshal(o.Documents, &o.docs); err != nil {
			return o, bad("documents", "must be an array of {name, mimeType, content (base64)}")
		}
	}
	return o, nil
}

// lastUserText is the text of the last user message ("" when none).
func lastUserText(msgs []InputMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		switch c := msgs[i].Content.(type) {
		case string:
			return c
		case []any:
			var parts []string
			for _, p := range c {
				if m, ok := p.(map[string]any); ok && m["type"] == "text" {
					if s, ok := m["text"].(string); ok {
						parts = append(parts, s)
					}
				}
			}
			return strings.Join(parts, "\n")
		}
		return ""
	}
	return ""
}
