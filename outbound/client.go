// Package outbound is the gateway's outbound HTTP client for actions: it
// confines every request and every redirect to a connection's or action's
// base URL (the address guard: no other host, no "..", no encoded or
// compatibility-form escapes), bounds each request in time and each reply
// in size, passes the W3C traceparent on, and explains every failure in
// words a model can act on (workflow error kinds: Invalid for the
// request's fault, Unavailable for the service's).
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/twostep/twostep/workflow"
)

// maxRedirects bounds redirects followed within the allowed base URL.
const maxRedirects = 5

// Reply is an HTTP response read whole, within the size cap.
type Reply struct {
	Status     int
	StatusText string
	Header     http.Header
	Body       []byte
}

// OK reports whether the status is 2xx.
func (rp Reply) OK() bool { return rp.Status >= 200 && rp.Status < 300 }

// Client sends requests that stay under a base URL. Its HTTP client is
// never modified: each request uses a shallow copy whose redirect policy
// keeps it under the base. The zero Client is not usable: set all fields.
type Client struct {
	// HTTP sends the requests (its transport, TLS and proxy settings).
	HTTP *http.Client
	// Timeout bounds a request whose own timeout is zero.
	Timeout time.Duration
	// MaxResponseBytes caps a reply; a larger one is a KindInvalid error.
	MaxResponseBytes int64
}

// Send performs req with a timeout (c.Timeout when timeout is zero),
// following redirects only while they stay within base, and reads at most
// c.MaxResponseBytes. what names the target in messages ("connection
// \"crm\"", "action \"crm.lookup\""). Errors are explained: a timeout, an
// unreachable host, an oversize reply.
func (c Client) Send(ctx context.Context, req *http.Request, base *url.URL, timeout time.Duration, what string) (Reply, error) {
	if timeout <= 0 {
		timeout = c.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := *c.HTTP
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if !WithinBase(base, next.URL) {
			return fmt.Errorf("a redirect to %s://%s%s leaves %s", next.URL.Scheme, next.URL.Host, next.URL.Path, base.Redacted())
		}
		return nil
	}
	req = req.WithContext(ctx)
	// The W3C traceparent of the action's span (DESIGN §9.5), through the
	// process's propagator: none when tracing is off.
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, transportError(ctx, err, what, timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.MaxResponseBytes+1))
	if err != nil {
		return Reply{}, transportError(ctx, err, what, timeout)
	}
	if int64(len(body)) > c.MaxResponseBytes {
		return Reply{}, workflow.Errorf(workflow.KindInvalid,
			"the reply from %s is larger than the %d-byte limit: ask for less (filters, paging)", what, c.MaxResponseBytes)
	}
	return Reply{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), Header: resp.Header, Body: body}, nil
}

// transportError explains a failed request: timeout, cancellation, refused
// redirect or unreachable host. The cause is kept for logs; it carries the
// URL but never a header.
func transportError(ctx context.Context, err error, what string, timeout time.Duration) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return workflow.WrapKind(workflow.KindUnavailable, err, "%s did not answer within %s", what, timeout)
	case ctx.Err() != nil:
		return workflow.WrapKind(workflow.KindUnavailable, err, "the request to %s was cancelled", what)
	}
	var ue *url.Error
	cause := err
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	return workflow.WrapKind(workflow.KindUnavailable, err, "the request to %s failed: %v", what, cause)
}

// StatusError explains a non-2xx reply: 4xx are the request's fault
// (KindInvalid), anything else the service's (KindUnavailable). detail is a
// short excerpt of the reply; the caller scrubs secrets from it.
func StatusError(rp Reply, what, detail string) error {
	kind := workflow.KindUnavailable
	if rp.Status >= 400 && rp.Status < 500 {
		kind = workflow.KindInvalid
	}
	msg := fmt.Sprintf("%s answered %d %s", what, rp.Status, rp.StatusText)
	if detail != "" {
		msg += ": " + detail
	}
	return workflow.Errorf(kind, "%s", msg)
}
