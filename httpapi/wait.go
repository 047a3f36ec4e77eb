package httpapi

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// MaxWait is the longest Prefer: wait the API honours (DESIGN §9.6).
const MaxWait = 60 * time.Second

// waitPoll is how often the shared notifier reads the workflows waited on.
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

// waiter is a request waiting on a workflow's round.
type waiter struct {
	ch    chan settledRound
	round int
}

// notifier is the one per-Server watcher of rounds that requests wait on
// (Prefer: wait): however many requests wait, each waited workflow is read
// once per waitPoll by one goroutine, which runs only while someone
// waits. The round may run on any instance; the store is the truth. It
// reads with the admin's scope: every waiter holds the workflow the engine
// already returned to its owner, and the notifier answers only with it.
type notifier struct {
	reads *workflow.AdminReader
	poll  time.Duration

	mu      sync.Mutex
	waiters map[string][]waiter
	running bool
	// recent and older are the ids of rounds that ended on this instance
	// (settle) while nobody waited on them, two generations of at most
	// recentIDs each: a request that starts waiting just after its round
	// ended reads the store at once instead of at the next poll.
	recent, older map[string]struct{}
}

// recentIDs bounds a generation of notifier.recent.
const recentIDs = 1024

func newNotifier(reads Reads) *notifier {
	return &notifier{reads: reads.Admin(), poll: waitPoll, waiters: map[string][]waiter{}}
}

// settledRound is what a waiter is answered with: the settled workflow
// (nil: it was deleted) and, when its round ended in a run of this
// instance, the workflow's messages as the run held them (nil otherwise).
type settledRound struct {
	w    *workflow.Workflow
	msgs []workflow.Message
}

// wait returns the workflow once its round (number round) has settled, or
// a nil workflow when ctx ends first.
func (n *notifier) wait(ctx context.Context, id string, round int) settledRound {
	ch := make(chan settledRound, 1)
	n.mu.Lock()
	n.waiters[id] = append(n.waiters[id], waiter{ch, round})
	_, ended := n.recent[id]
	if !ended {
		_, ended = n.older[id]
	}
	if !n.running {
		n.running = true
		go n.loop()
	}
	n.mu.Unlock()
	if ended {
		// The round ended here before this request started waiting.
		if w, err := n.reads.Get(ctx, id); err == nil && settledFor(w, round) {
			n.drop(id, ch)
			return settledRound{w: w}
		}
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		n.drop(id, ch)
		return settledRound{}
	}
}

// drop removes the waiter ch of id.
func (n *notifier) drop(id string, ch chan settledRound) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws := n.waiters[id]
	for i, w := range ws {
		if w.ch == ch {
			n.waiters[id] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(n.waiters[id]) == 0 {
		delete(n.waiters, id)
	}
}

// settle answers the waiters of w, a workflow whose round just ended on
// this instance, at once (with msgs, the workflow's messages when the
// round's run handed them over), or remembers its id for a request that
// starts waiting in a moment.
func (n *notifier) settle(w *workflow.Workflow, msgs []workflow.Message) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws, ok := n.waiters[w.ID]
	if !ok {
		if n.recent == nil || len(n.recent) >= recentIDs {
			n.older, n.recent = n.recent, make(map[string]struct{}, recentIDs)
		}
		n.recent[w.ID] = struct{}{}
		return
	}
	n.answerLocked(w.ID, ws, func(round int) bool { return round <= w.Round }, settledRound{w: w, msgs: msgs})
}

// answerLocked answers the waiters ws of id whose round done reports
// settled with r, keeping the others.
func (n *notifier) answerLocked(id string, ws []waiter, done func(round int) bool, r settledRound) {
	var left []waiter
	for _, w := range ws {
		if done(w.round) {
			w.ch <- r
		} else {
			left = append(left, w)
		}
	}
	if len(left) == 0 {
		delete(n.waiters, id)
	} else {
		n.waiters[id] = left
	}
}

// loop reads every waited workflow once per poll and answers the waiters
// of the settled ones; it ends when nobody waits.
func (n *notifier) loop() {
	t := time.NewTicker(n.poll)
	defer t.Stop()
	for range t.C {
		n.mu.Lock()
		ids := make([]string, 0, len(n.waiters))
		for id := range n.waiters {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			w, err := n.reads.Get(ctx, id)
			cancel()
			done := func(round int) bool { return settledFor(w, round) }
			switch {
			case workflow.KindOf(err) == workflow.KindNotFound:
				w = nil // deleted: answer the waiters with what they had
				done = func(int) bool { return true }
			case err != nil:
				continue
			}
			n.mu.Lock()
			if ws, ok := n.waiters[id]; ok {
				n.answerLocked(id, ws, done, settledRound{w: w})
			}
			n.mu.Unlock()
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
		if done = s.waits.wait(wctx, w.ID, w.Round); done.w == nil {
			return out // the deadline: today's answer
		}
	}
	// done.w is the settled workflow in hand (from this request or the
	// notifier): only its messages are read, unless the round's run on
	// this instance handed them over.
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
