package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// Defaults of Deliverer.
const (
	DefaultFirstRetry = 5 * time.Second
	DefaultMaxRetry   = time.Hour
	DefaultWindow     = 24 * time.Hour
	DefaultLease      = time.Minute
	DefaultPoll       = time.Second
	DefaultTimeout    = 15 * time.Second
	// DefaultConcurrency is how many attempts one instance makes at once.
	DefaultConcurrency = 8
	// batch is how many deliveries one claim takes.
	batch = 16
)

// Deliverer posts the outbox's due deliveries. Every instance sharing a
// store runs one; the outbox's lease makes each attempt one instance's:
// an attempt starts only while its lease has at least Timeout left (and
// Timeout is at most half the lease), so it ends before the lease does.
// A delivery is retried, FirstRetry after its first failure and twice as
// long after each next one (at most MaxRetry), until a 2xx answers it;
// an attempt that fails once Window has passed since the event is the
// last (the delivery is marked failed). Delivery is at least once: an
// instance that dies after posting but before recording the answer
// leaves the delivery to be posted again when its lease ends (the same
// webhook-id, so receivers can drop the repeat). A batch's attempts run
// at most Concurrency at a time, so a receiver that hangs for its whole
// timeout holds one of them, not every other delivery of the batch.
type Deliverer struct {
	Outbox workflow.WebhookOutbox
	// Client posts the deliveries; nil means one whose dialer refuses
	// private addresses unless AllowPrivate.
	Client       *http.Client
	AllowPrivate bool
	FirstRetry   time.Duration
	MaxRetry     time.Duration
	Window       time.Duration
	Lease        time.Duration
	Poll         time.Duration
	Timeout      time.Duration
	// Concurrency bounds the attempts made at once (DefaultConcurrency
	// when not positive).
	Concurrency int
	// Logger receives the failures the deliverer rides out; the zero
	// Logger discards them.
	Logger zerolog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (d *Deliverer) defaults() {
	def := func(v *time.Duration, x time.Duration) {
		if *v <= 0 {
			*v = x
		}
	}
	def(&d.FirstRetry, DefaultFirstRetry)
	def(&d.MaxRetry, DefaultMaxRetry)
	def(&d.Window, DefaultWindow)
	def(&d.Lease, DefaultLease)
	def(&d.Poll, DefaultPoll)
	def(&d.Timeout, DefaultTimeout)
	// An attempt must end within its lease, so no other instance makes
	// it again while it runs.
	d.Timeout = min(d.Timeout, d.Lease/2)
	if d.Concurrency <= 0 {
		d.Concurrency = DefaultConcurrency
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = Dialer(d.AllowPrivate).DialContext
		tr.Proxy = nil
		d.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, not followed
		}}
	}
}

// Run delivers until ctx is done, polling the outbox every Poll.
func (d *Deliverer) Run(ctx context.Context) {
	d.defaults()
	t := time.NewTicker(d.Poll)
	defer t.Stop()
	for {
		for d.RunOnce(ctx) == batch && ctx.Err() == nil {
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunOnce claims one batch of due deliveries, attempts each (at most
// Concurrency at once) and records the outcome; it returns how many it
// claimed, once every attempt it started has ended. An attempt starts
// only while its lease still covers a whole Timeout: those whose turn
// comes later are left to the next claim.
func (d *Deliverer) RunOnce(ctx context.Context) int {
	d.defaults()
	claimed := d.Now()
	ds, err := d.Outbox.ClaimWebhooks(ctx, claimed, d.Lease, batch)
	if err != nil && ctx.Err() == nil {
		// Those leased before the failure (another user's slot on a
		// shard that is down) are attempted all the same.
		d.Logger.Warn().AnErr("err", err).Int("claimed", len(ds)).Msg("webhooks: claiming deliveries failed")
	}
	slots := make(chan struct{}, d.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, dv := range ds {
		select {
		case slots <- struct{}{}: // a free slot: the clock is read after
		case <-ctx.Done():
		}
		if ctx.Err() != nil || d.Now().After(claimed.Add(d.Lease-d.Timeout)) {
			// Its lease could end during the attempt: leave it to end,
			// and the delivery to the next claim (here or elsewhere).
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			d.attempt(ctx, dv)
		})
	}
	return len(ds)
}

// attempt posts dv once and records what came of it.
func (d *Deliverer) attempt(ctx context.Context, dv workflow.WebhookDelivery) {
	now := d.Now()
	code, err := d.post(ctx, dv, now)
	if err != nil && ctx.Err() != nil {
		// Cut by this instance's shutdown, not failed: nothing is
		// recorded (a delivery past its window is not given up for it),
		// and the delivery is attempted again when its lease ends.
		return
	}
	a := workflow.WebhookAttempt{At: now.UTC(), StatusCode: code}
	switch {
	case err != nil:
		a.Error = err.Error()
	case code < 200 || code > 299:
		a.Error = "HTTP " + strconv.Itoa(code)
	}
	dv.Attempts = append(dv.Attempts, a)
	switch {
	case a.Error == "":
		dv.Status, dv.NextAttempt = workflow.DeliveryDelivered, time.Time{}
	case now.Sub(dv.CreatedAt) >= d.Window:
		dv.Status, dv.NextAttempt = workflow.DeliveryFailed, time.Time{}
		d.Logger.Warn().Str("delivery", dv.ID).Str("workflow", dv.WorkflowID).Int("attempts", len(dv.Attempts)).Msg("webhooks: delivery given up")
	default:
		dv.NextAttempt = now.Add(d.backoff(len(dv.Attempts)))
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.Outbox.FinishWebhook(fctx, dv); err != nil {
		d.Logger.Warn().Str("delivery", dv.ID).AnErr("err", err).Msg("webhooks: recording an attempt failed")
	}
}

// backoff is the wait after the n-th failed attempt.
func (d *Deliverer) backoff(n int) time.Duration {
	w := d.FirstRetry
	for i := 1; i < n && w < d.MaxRetry; i++ {
		w *= 2
	}
	return min(w, d.MaxRetry)
}

// post sends dv, signed at now, and returns the status code.
func (d *Deliverer) post(ctx context.Context, dv workflow.WebhookDelivery, now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dv.URL, bytes.NewReader(dv.Body))
	if err != nil {
		return 0, fmt.Errorf("cannot build the request: %w", err)
	}
	ts := now.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "twostep-webhooks")
	req.Header.Set("webhook-id", dv.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", Sign(dv.Secret, dv.ID, ts, dv.Body))
	resp, err := d.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST failed: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
