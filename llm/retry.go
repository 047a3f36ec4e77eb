package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// failure is one failed attempt, classified.
type failure struct {
	err        error         // a *workflow.Error, free of secrets
	retryable  bool          // 429, 5xx, 408, timeouts, transport errors
	retryAfter time.Duration // the provider's Retry-After, 0 if none
	status     int           // the HTTP status, 0 if none
}

// classify turns the error of one attempt into a failure. attemptCtx is the
// attempt's context (bounded by the per-attempt timeout); the caller has
// already handled cancellation of its own context.
func (m *Model) classify(attemptCtx context.Context, obs *observation, err error) failure {
	reached, status, retryAfter, netErr := obs.snapshot()
	cause := m.redact(err)
	switch {
	case errors.Is(attemptCtx.Err(), context.DeadlineExceeded):
		return failure{retryable: true, err: workflow.WrapKind(workflow.KindUnavailable, cause,
			"%s did not answer within %s", m.provider, m.timeout)}
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return failure{retryable: true, retryAfter: retryAfter, status: status,
			err: workflow.WrapKind(workflow.KindUnavailable, cause, "%s answered HTTP %d", m.provider, status)}
	case status >= 400:
		return failure{status: status, err: workflow.WrapKind(workflow.KindInvalid, cause,
			"%s refused the request with HTTP %d%s", m.provider, status, providerReason(cause))}
	case netErr:
		return failure{retryable: true, err: workflow.WrapKind(workflow.KindUnavailable, cause,
			"%s could not be reached", m.provider)}
	case reached:
		// The provider answered 2xx but the client could not use the reply.
		return failure{status: status, err: workflow.WrapKind(workflow.KindUnavailable, cause,
			"%s returned a reply that could not be read", m.provider)}
	default:
		// The client refused the request before sending it.
		return failure{err: workflow.WrapKind(workflow.KindInvalid, cause,
			"%s client rejected the request", m.provider)}
	}
}

// backoff is the wait before retry number attempt (1 for the first retry):
// uniform in [step/2, step], where step is base·2^(attempt-1) capped at
// maxDelay. A Retry-After from the provider replaces the computed delay. ok
// is false when Retry-After asks for more than maxDelay: waiting that long
// would hold a round hostage, so the call fails as unavailable instead.
func backoff(attempt int, base, maxDelay, retryAfter time.Duration, rnd func(n int64) int64) (d time.Duration, ok bool) {
	if retryAfter > 0 {
		return retryAfter, retryAfter <= maxDelay
	}
	ceil := base << min(attempt-1, 30)
	if ceil <= 0 || ceil > maxDelay {
		ceil = maxDelay
	}
	// Jitter over the upper half of the step: a retry storm still spreads
	// out, and the schedule stays recognisably exponential.
	half := ceil / 2
	return half + time.Duration(rnd(int64(ceil-half)+1)), true
}

// sleep waits for d or until ctx is done, and returns ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// redact returns err's text with every configured secret replaced, as a new
// error: the original chain (which may quote a key) is not kept. Context
// errors are returned unchanged so errors.Is keeps working.
func (m *Model) redact(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	msg := err.Error()
	for _, s := range m.secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return errors.New(textclip.Clip(msg, 500))
}

// providerReason is the provider's own explanation of a refusal (for
// example "The model `x` does not exist"), taken from the already redacted
// cause, as ": reason" for the public message, or "" when there is none.
// The workflow's error keeps it, so a user sees why, not just "HTTP 404".
func providerReason(cause error) string {
	if cause == nil {
		return ""
	}
	msg := cause.Error()
	const prefix = "API returned unexpected status code: "
	if i := strings.Index(msg, prefix); i >= 0 {
		msg = msg[i+len(prefix):]
		// Drop the status the message already names: "404: reason".
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		} else {
			return ""
		}
	}
	msg = textclip.Clip(strings.Join(strings.Fields(msg), " "), 300)
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// jitter is the default random source of backoff.
func jitter(n int64) int64 { return rand.Int64N(n) }

// retryExhausted annotates the final failure with how many attempts were made.
func retryExhausted(f failure, attempts int) error {
	if !f.retryable || attempts <= 1 {
		return f.err
	}
	var we *workflow.Error
	if errors.As(f.err, &we) {
		return &workflow.Error{Kind: we.Kind, Message: fmt.Sprintf("%s (gave up after %d attempts)", we.Message, attempts), Err: we.Err}
	}
	return f.err
}
