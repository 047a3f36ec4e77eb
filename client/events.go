package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twostep/twostep/apiv1"
)

// Event is one Server-Sent Event of a workflow's stream. Exactly one of
// Message, Workflow, Approval is set, by Type: "message", "status",
// "approval"; "deleted" carries none.
type Event struct {
	Type string `json:"type"`
	// ID is the event's id: a message's seq ("" for other events).
	ID string `json:"id,omitempty"`
	// Data is the event's JSON as sent (fields this package does not know
	// included); nil when it carries none.
	Data     json.RawMessage  `json:"data,omitempty"`
	Message  *Message         `json:"-"`
	Workflow *Workflow        `json:"-"`
	Approval *PendingApproval `json:"-"`
}

// Reconnect backoff of Events.
const (
	eventsMinBackoff = 100 * time.Millisecond
	eventsMaxBackoff = 5 * time.Second
	eventsMaxRetries = 8
)

// Events follows the workflow's event stream until its round ends or
// pauses (a status event with a settled workflow, then the approval
// event of a pause), the workflow is deleted, or ctx is done. A dropped
// connection is reopened with Last-Event-ID and backoff, so every message
// arrives once, in order. A problem answer (404, 401) or giving up after
// repeated failures ends the sequence with that error.
func (c *Client) Events(ctx context.Context, id string) iter.Seq2[Event, error] {
	return c.EventsAfter(ctx, id, 0)
}

// EventsAfter is Events starting after the message with seq after (as a
// reconnect with Last-Event-ID would): earlier messages are not replayed.
func (c *Client) EventsAfter(ctx context.Context, id string, after int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		backoff := eventsMinBackoff
		failures := 0
		for {
			done, progressed, err := c.stream(ctx, id, &after, yield)
			if done || ctx.Err() != nil {
				return
			}
			var p *Problem
			if errors.As(err, &p) {
				yield(Event{}, err)
				return
			}
			if progressed {
				failures, backoff = 0, eventsMinBackoff
			}
			if failures++; failures > eventsMaxRetries {
				yield(Event{}, fmt.Errorf("client: the event stream of %s kept failing: %w", id, err))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, eventsMaxBackoff)
		}
	}
}

// stream reads one connection of the event stream. done means the
// sequence is over (the round settled, the workflow was deleted, or the
// consumer stopped); progressed that an event arrived.
func (c *Client) stream(ctx context.Context, id string, after *int64, yield func(Event, error) bool) (done, progressed bool, err error) {
	var hdr = map[string][]string{"Accept": {"text/event-stream"}}
	if *after > 0 {
		hdr["Last-Event-ID"] = []string{strconv.FormatInt(*after, 10)}
	}
	resp, err := c.send(ctx, "GET", "/api/v1/workflows/"+url.PathEscape(id)+"/events", nil, hdr)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	settled := false
	for ev, err := range ReadEvents(resp.Body) {
		if err != nil {
			if settled {
				return true, progressed, nil // a pause whose approval event was cut off
			}
			return false, progressed, err
		}
		progressed = true
		if ev.Type == "message" && ev.ID != "" {
			if n, err := strconv.ParseInt(ev.ID, 10, 64); err == nil {
				*after = n
			}
		}
		if !yield(ev, nil) {
			return true, progressed, nil
		}
		switch {
		case ev.Type == "deleted":
			return true, progressed, nil
		case ev.Type == "status" && !ev.Workflow.Running():
			settled = true
			if ev.Workflow.Status != "awaiting_approval" {
				return true, progressed, nil
			}
		case ev.Type == "approval":
			return true, progressed, nil
		}
	}
	if settled {
		return true, progressed, nil // a pause whose approval event was cut off
	}
	return false, progressed, errors.New("the event stream ended before the round did")
}

// ReadEvents decodes a workflow's event stream (Server-Sent Events) from r
// until it ends, e.g. a recorded response body; Events reads each of its
// connections with it. A read error or an event whose data is not the
// JSON its type calls for ends the sequence with that error.
func ReadEvents(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var typ, evID string
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if typ == "" {
					continue
				}
				ev, err := decodeEvent(typ, data.String())
				ev.ID = evID
				typ, evID, data = "", "", strings.Builder{}
				if !yield(ev, err) || err != nil {
					return
				}
			case strings.HasPrefix(line, "event:"):
				typ = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "id:"):
				evID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, err)
		}
	}
}

func decodeEvent(typ, data string) (Event, error) {
	ev := Event{Type: typ}
	if json.Valid([]byte(data)) {
		ev.Data = json.RawMessage(data)
	}
	var err error
	switch typ {
	case "message":
		ev.Message = &Message{}
		err = json.Unmarshal([]byte(data), ev.Message)
	case "status":
		ev.Workflow = &Workflow{}
		err = json.Unmarshal([]byte(data), ev.Workflow)
	case "approval":
		ev.Approval = &PendingApproval{}
		err = json.Unmarshal([]byte(data), ev.Approval)
	}
	if err != nil {
		return ev, fmt.Errorf("client: a %s event is not JSON: %w", typ, err)
	}
	return ev, nil
}

// RoundError is the error of Run for a round that failed or was stopped;
// the Result beside it has the workflow and the round's messages.
type RoundError struct {
	Status, StopReason, Reason string
}

func (e *RoundError) Error() string {
	return fmt.Sprintf("twostep: the round %s (%s): %s", e.Status, e.StopReason, e.Reason)
}

// Wait follows the workflow's events until its round ends or pauses for
// approval and returns the workflow with the round's messages. onEvent
// (nil for none) sees every event as it arrives, e.g. to show progress; the
// stream starts after the message with seq after (0: from the first). A
// failed or stopped round also returns a *RoundError; a paused one, a
// result whose PendingApproval says what to decide.
func (c *Client) Wait(ctx context.Context, id string, after int64, onEvent func(Event)) (*Result, error) {
	for ev, err := range c.EventsAfter(ctx, id, after) {
		if err != nil {
			return nil, err
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := c.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	msgs, err := c.Messages(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	r := &Result{WorkflowResult: apiv1.WorkflowResult{WorkflowView: *w}}
	for _, m := range msgs {
		if m.Round == w.Round {
			r.Messages = append(r.Messages, m)
		}
	}
	return r, r.roundError()
}

// roundError is the *RoundError of a failed or stopped round, else nil.
func (r *Result) roundError() error {
	if r.Status == "failed" || r.Status == "stopped" {
		return &RoundError{Status: r.Status, StopReason: r.StopReason, Reason: r.Error}
	}
	return nil
}

// Run starts a workflow with prompt and documents and waits until its
// round ends or pauses for approval: with Prefer: wait first, then by
// following the event stream (Wait). Answer() of the result is the final
// answer; a failed or stopped round also returns a *RoundError, and a
// paused one a result whose PendingApproval says what to decide.
func (c *Client) Run(ctx context.Context, prompt string, docs ...Upload) (*Result, error) {
	r, err := c.Create(ctx, CreateRequest{Prompt: prompt, Documents: docs, Wait: c.runWait})
	if err != nil {
		return nil, err
	}
	if !r.Waited {
		return c.Wait(ctx, r.ID, 0, nil)
	}
	return r, r.roundError()
}
