package httpapi

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

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
	waiters map[string][]chan settledRound
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
	return &notifier{reads: reads.Admin(), poll: waitPoll, waiters: map[string][]chan settledRound{}}
}

// settledRound is what a waiter is answered with: the settled workflow
// (nil: it was deleted) and, when its round ended in a run of this
// instance, the workflow's messages as the run held them (nil otherwise).
type settledRound struct {
	w    *workflow.Workflow
	msgs []workflow.Message
}

// wait returns the workflow once its round has settled, or a nil
// workflow when ctx ends first.
func (n *notifier) wait(ctx context.Context, id string) settledRound {
	ch := make(chan settledRound, 1)
	n.mu.Lock()
	n.waiters[id] = append(n.waiters[id], ch)
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
		if w, err := n.reads.Get(ctx, id); err == nil && settled(w) {
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
	chans := n.waiters[id]
	for i, c := range chans {
		if c == ch {
			n.waiters[id] = append(chans[:i:i], chans[i+1:]...)
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
	chans, ok := n.waiters[w.ID]
	if !ok {
		if n.recent == nil || len(n.recent) >= recentIDs {
			n.older, n.recent = n.recent, make(map[string]struct{}, recentIDs)
		}
		n.recent[w.ID] = struct{}{}
		return
	}
	for _, ch := range chans {
		ch <- settledRound{w: w, msgs: msgs}
	}
	delete(n.waiters, w.ID)
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
			if err != nil || !settled(w) {
				if workflow.KindOf(err) != workflow.KindNotFound {
					continue
				}
				w = nil // deleted: answer the waiters with what they had
			}
			n.mu.Lock()
			for _, ch := range n.waiters[id] {
				ch <- settledRound{w: w}
			}
			delete(n.waiters, id)
			n.mu.Unlock()
		}
	}
}

// WorkflowResult is a workflow and, when the request waited for its round
// (Prefer: wait) and the round settled in time, the round's messages.
type WorkflowResult struct {
	WorkflowView
	Messages []MessageView `json:"messages,omitempty" doc:"With Prefer: wait, when the round ended or paused in time: the round's messages in seq order"`
	// WebhookSecret is answered once, by the create that asked for a
	// webhook.
	WebhookSecret string `json:"webhookSecret,omitempty" doc:"The create's answer only, when it asked for a webhook: the secret (whsec_...) its deliveries are signed with; it is never shown again"`
}

// waitedOutput is the answer of a request that may wait for its round.
type waitedOutput struct {
	Status            int
	PreferenceApplied string `header:"Preference-Applied" doc:"wait when the answer waited for the round (Prefer: wait)"`
	Body              WorkflowResult
}

// answerAfter answers w with status, or, when the request asked to wait
// (Prefer: wait=N) and the round settles within N seconds, 200 with the
// settled workflow and the round's messages.
func (s *Server) answerAfter(ctx context.Context, prefer string, w *workflow.Workflow, status int) *waitedOutput {
	out := &waitedOutput{Status: status, Body: WorkflowResult{WorkflowView: viewWorkflow(w)}}
	d, ok := preferWait(prefer)
	if !ok {
		return out
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := settledRound{w: w}
	if !settled(w) {
		if done = s.waits.wait(wctx, w.ID); done.w == nil {
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
	out.Body = WorkflowResult{WorkflowView: viewWorkflow(done.w)}
	for _, m := range msgs {
		if m.Round == done.w.Round {
			out.Body.Messages = append(out.Body.Messages, viewMessage(m))
		}
	}
	return out
}
