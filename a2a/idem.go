package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// A repeated messageId is idempotent through the Idempotency-Key store
// (DESIGN §10.3): the first message claims "a2a:<messageId>" for its user
// and keeps its task's id for limits.idempotencyWindow; a repeat of the
// same message is answered with that task, a different message with the
// same id is refused.
const (
	idemPrefix   = "a2a:"
	idemClaimTTL = 30 * time.Second
	idemWait     = 10 * time.Second
	idemPoll     = 50 * time.Millisecond
	idemTimeout  = 5 * time.Second
)

// once runs do unless the message was taken before, then answers with the
// task it made.
func (s *Server) once(c *call, in SendMessageRequest, do func() (*workflow.Workflow, int, error)) (*workflow.Workflow, int, error) {
	store := s.opts.Idempotency
	if store == nil {
		return do()
	}
	key, token, sum := idemPrefix+in.Message.MessageID, workflow.NewID("idem_"), digest(in)
	deadline := time.Now().Add(idemWait)
	for {
		rec, claimed, err := store.ClaimIdempotency(c.ctx, c.user, key, token, idemClaimTTL)
		if err != nil {
			return nil, 0, workflow.WrapKind(workflow.KindUnavailable, err, "the store that keeps messageIds is unavailable")
		}
		if claimed {
			return s.run(c, key, token, sum, do)
		}
		if a := rec.Answer; a != nil {
			if a.Hash != sum {
				return nil, 0, invalidParams("messageId " + quote(in.Message.MessageID) + " was already used with another message: use a new messageId for a new message")
			}
			wf, round, _, err := s.loadTask(c, string(a.Body))
			return wf, round, err
		}
		if time.Now().After(deadline) {
			return nil, 0, workflow.Errorf(workflow.KindUnavailable, "a message with this messageId is still being taken")
		}
		select {
		case <-c.ctx.Done():
			return nil, 0, c.ctx.Err()
		case <-time.After(idemPoll):
		}
	}
}

// run does the work under the claim and keeps the task's id, or releases
// the claim when it failed (a retry then does the work).
func (s *Server) run(c *call, key, token, sum string, do func() (*workflow.Workflow, int, error)) (*workflow.Workflow, int, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), idemTimeout)
	defer cancel()
	wf, round, err := do()
	if err != nil {
		if rerr := s.opts.Idempotency.ReleaseIdempotency(ctx, c.user, key, token); rerr != nil {
			zerolog.Ctx(c.ctx).Warn().Err(rerr).Msg("releasing a messageId claim failed; it expires by itself")
		}
		return nil, 0, err
	}
	a := workflow.IdempotentAnswer{Hash: sum, Status: 200, Body: []byte(taskID(wf.ID, round))}
	keep := workflow.IdempotencyKeep{Window: s.limits.IdempotencyWindow, UserBytes: s.limits.IdempotencyBytesPerUser}
	if err := s.opts.Idempotency.SaveIdempotency(ctx, c.user, key, token, a, keep); err != nil {
		zerolog.Ctx(c.ctx).Warn().Err(err).Msg("keeping a messageId's task failed")
	}
	return wf, round, nil
}

// digest identifies a message: its JSON and the push config sent with it
// (not how the caller waits: a blocking retry of a streamed send is the
// same message).
func digest(in SendMessageRequest) string {
	h := sha256.New()
	_, _ = h.Write([]byte("a2a SendMessage\n"))
	_ = json.NewEncoder(h).Encode(in.Message)
	if in.Configuration != nil {
		_ = json.NewEncoder(h).Encode(in.Configuration.TaskPushNotificationConfig)
	}
	return hex.EncodeToString(h.Sum(nil))
}
