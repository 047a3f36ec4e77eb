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
	// DefaultPerUser is how many of one user's deliveries are attempted
	// at once, across every instance: a user whose receiver hangs holds
	// at most that many attempt slots.
	DefaultPerUser = 2
	// DefaultConnectTimeout bounds connecting to a receiver (TLS
	// handshake included), DefaultHeaderTimeout waiting for its answer's
	// headers once the request is sent: a receiver that hangs lets go of
	// its slot that soon, whatever the attempt's Timeout.
	DefaultConnectTimeout = 3 * time.Second
	DefaultHeaderTimeout  = 10 * time.Second
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
// webhook-id, so receivers can drop the repeat). Attempts run at most
// Concurrency at a time, and Run claims deliveries whenever a slot is
// free (not once a whole batch ended); users share the claims, at most
// PerUser deliveries of one user attempted at once (by every instance),
// so one user's receiver that hangs holds PerUser slots, not every other
// user's deliveries. Connecting is bounded by ConnectTimeout and the
// answer's headers by HeaderTimeout.
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
	// PerUser bounds one user's deliveries attempted at once, across
	// instances (DefaultPerUser when not positive).
	PerUser int
	// ConnectTimeout and HeaderTimeout bound connecting to a receiver and
	// waiting for its answer's headers (DefaultConnectTimeout,
	// DefaultHeaderTimeout; each at most Timeout). They apply to the
	// default Client only.
	ConnectTimeout time.Duration
	HeaderTimeout  time.Duration
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
	def(&d.ConnectTimeout, DefaultConnectTimeout)
	def(&d.HeaderTimeout, DefaultHeaderTimeout)
	d.ConnectTimeout, d.HeaderTimeout = min(d.ConnectTimeout, d.Timeout), min(d.HeaderTimeout, d.Timeout)
	if d.Concurrency <= 0 {
		d.Concurrency = DefaultConcurrency
	}
	if d.PerUser <= 0 {
		d.PerUser = DefaultPerUser
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		dialer := Dialer(d.AllowPrivate)
		dialer.Timeout = d.ConnectTimeout
		tr.DialContext = dialer.DialContext
		tr.TLSHandshakeTimeout = d.ConnectTimeout
		tr.ResponseHeaderTimeout = d.HeaderTimeout
		tr.Proxy = nil
		d.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, not followed
		}}
	}
}

// Run delivers until ctx is done. Whenever attempt slots are free it
// claims that many due deliveries and starts their attempts, without
// waiting for the attempts already running: a receiver that hangs holds
// its own slots only. With nothing due it looks again every Poll, or as
// soon as a slot comes free. It returns once every attempt it started
// has ended.
func (d *Deliverer) Run(ctx context.Context) {
	d.defaults()
	slots := make(chan struct{}, d.Concurrency)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(d.Poll)
	defer t.Stop()
	for {
		if free := d.Concurrency - len(slots); free > 0 && d.dispatch(ctx, slots, freed, &wg, free) == free && ctx.Err() == nil {
			continue // every free slot got one: more may be due
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-freed:
		}
	}
}

// RunOnce claims one batch of due deliveries, attempts each (at most
// Concurrency at once) and records the outcome; it returns how many it
// claimed, once every attempt it started has ended.
func (d *Deliverer) RunOnce(ctx context.Context) int {
	d.defaults()
	slots := make(chan struct{}, d.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	return d.dispatch(ctx, slots, nil, &wg, batch)
}

// dispatch claims up to n due deliveries and starts each one's attempt as
// a slot of slots comes free (signalling freed, when not nil, as each
// ends); it returns how many it claimed. An attempt starts only while its
// lease still covers a whole Timeout: those whose turn comes later are
// left to the next claim.
func (d *Deliverer) dispatch(ctx context.Context, slots chan struct{}, freed chan struct{}, wg *sync.WaitGroup, n int) int {
	claimed := d.Now()
	ds, err := d.Outbox.ClaimWebhooks(ctx, claimed, d.Lease, n, d.PerUser)
	if err != nil && ctx.Err() == nil {
		// Those leased before the failure (another user's slot on a
		// shard that is down) are attempted all the same.
		d.Logger.Warn().AnErr("err", err).Int("claimed", len(ds)).Msg("webhooks: claiming deliveries failed")
	}
	for _, dv := range ds {
		select {
		case slots <- struct{}{}: // a free slot: the clock is read after
		case <-ctx.Done():
			return len(ds)
		}
		if d.Now().After(claimed.Add(d.Lease - d.Timeout)) {
			// Its lease could end during the attempt: leave it to end,
			// and the delivery to the next claim (here or elsewhere).
			<-slots
			break
		}
		wg.Go(func() {
			defer func() {
				<-slots
				if freed != nil {
					select {
					case freed <- struct{}{}:
					default:
					}
				}
			}()
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
