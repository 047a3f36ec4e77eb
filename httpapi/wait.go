package httpapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// MaxWait is the longest Prefer: wait the API honours (DESIGN §9.6).
const MaxWait = 60 * time.Second

// waitPoll is how often a request waiting for its round (Prefer: wait)
// reads the workflow: how soon it learns of a round that ended on another
// instance or paused for approval.
const waitPoll = 100 * time.Millisecond

// preferWait returns the wait=<seconds> preference of a Prefer header
// (RFC 7240; several preferences may be comma-separated), capped at
// MaxWait, and whether one was given.
func preferWait(header string) (time.Duration, bool) {
	for pref := range strings.SplitSeq(header, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pref), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "wait") {
			continue
		}
		n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(value), `"`))
		if err != nil || n <= 0 {
			return 0, false
		}
		return min(time.Duration(n)*time.Second, MaxWait), true
	}
	return 0, false
}

// settled reports whether a waiting client has its answer: the round
// ended or paused for approval.
func settled(w *workflow.Workflow) bool {
	return w.Status != workflow.StatusRunning
}

// settledFor reports whether round, the round a client waits on, has
// settled in w: w settled, or w is at a later round (the round ended and a
// queued round started in the same commit, DESIGN §10.3).
func settledFor(w *workflow.Workflow, round int) bool {
	return settled(w) || w.Round > round
}

// settledRound is what a waiting request is answered with: the settled
// workflow (nil: the wait ended without one) and, when its round ended in
// a run of this instance, the workflow's messages as the run held them
// (nil otherwise).
type settledRound struct {
	w    *workflow.Workflow
	msgs []workflow.Message
}

// awaitRound returns workflow id once its round (number round) has
// settled, or a nil workflow when ctx ends first or the workflow is
// deleted. A round that ends on this instance is heard from the published
// changes, with the run's messages; anything else (a round on another
// instance, a pause for approval) is read from the store: once when the
// request starts waiting (the round may have ended just before), then
// every s.waitPoll. It reads with the admin's scope: the request holds the
// workflow the engine already returned to its owner, and is answered only
// with it.
func (s *Server) awaitRound(ctx context.Context, id string, round int) settledRound {
	changed, cancel := s.changes.Subscribe(id)
	defer cancel()
	poll := time.NewTicker(s.waitPoll)
	defer poll.Stop()
	for read := true; ; {
		if read {
			w, err := s.reads.Admin().Get(ctx, id)
			switch {
			case workflow.KindOf(err) == workflow.KindNotFound:
				return settledRound{} // deleted: answer with what the request had
			case err == nil && settledFor(w, round):
				return settledRound{w: w}
			}
		}
		select {
		case <-ctx.Done():
			return settledRound{}
		case c := <-changed:
			if c.Ended != nil && c.Ended.Round >= round {
				return settledRound{w: c.Ended, msgs: c.Messages}
			}
			read = false // a step's commit: the poll reads
		case <-poll.C:
			read = true
		}
	}
}

// waitedOutput is the answer of a request that may wait for its round.
type waitedOutput struct {
	Status            int
	PreferenceApplied string `header:"Preference-Applied" doc:"wait when the answer waited for the round (Prefer: wait)"`
	Body              apiv1.WorkflowResult
}

// answerAfter answers w with status, or, when the request asked to wait
// (Prefer: wait=N) and the round settles within N seconds, 200 with the
// settled workflow and the round's messages.
func (s *Server) answerAfter(ctx context.Context, prefer string, w *workflow.Workflow, status int) *waitedOutput {
	out := &waitedOutput{Status: status, Body: apiv1.WorkflowResult{WorkflowView: viewWorkflow(w)}}
	d, ok := preferWait(prefer)
	if !ok {
		return out
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := settledRound{w: w}
	if !settled(w) {
		if done = s.awaitRound(wctx, w.ID, w.Round); done.w == nil {
			return out // the deadline: today's answer
		}
	}
	// done.w is the settled workflow in hand (from this request, the store
	// or the round's end): only its messages are read, unless the round's
	// run on this instance handed them over.
	msgs := done.msgs
	if msgs == nil || !done.w.OwnedBy(UserFrom(ctx)) { // (the read checks the owner)
		var err error
		if msgs, err = s.reads.MessagesOf(ctx, UserFrom(ctx), done.w, 0, 0); err != nil {
			return out
		}
	}
	out.Status, out.PreferenceApplied = 200, "wait"
	out.Body = apiv1.WorkflowResult{WorkflowView: viewWorkflow(done.w)}
	// The round waited on: done.w may be at the next one already, when a
	// queued round started as this one ended.
	for _, m := range msgs {
		if m.Round == w.Round {
			out.Body.Messages = append(out.Body.Messages, viewMessage(m))
		}
	}
	return out
}
