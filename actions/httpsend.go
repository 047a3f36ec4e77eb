package actions

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

// reply is an HTTP response read whole, within the size cap.
type reply struct {
	status     int
	statusText string
	header     http.Header
	body       []byte
}

// ok reports whether the status is 2xx.
func (rp reply) ok() bool { return rp.status >= 200 && rp.status < 300 }

// send performs req with a timeout, following redirects only while they stay
// within base, and reads at most the configured number of bytes. what names
// the target in messages ("connection \"crm\"", "action \"crm.lookup\"").
// Errors are explained: a timeout, an unreachable host, an oversize reply.
func (r *Registry) send(ctx context.Context, req *http.Request, base *url.URL, timeout time.Duration, what string) (reply, error) {
	if timeout <= 0 {
		timeout = r.limits.HTTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := *r.client
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if !withinBase(base, next.URL) {
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
		return reply{}, transportError(ctx, err, what, timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.limits.MaxResponseBytes+1))
	if err != nil {
		return reply{}, transportError(ctx, err, what, timeout)
	}
	if int64(len(body)) > r.limits.MaxResponseBytes {
		return reply{}, workflow.Errorf(workflow.KindInvalid,
			"the reply from %s is larger than the %d-byte limit: ask for less (filters, paging)", what, r.limits.MaxResponseBytes)
	}
	return reply{status: resp.StatusCode, statusText: http.StatusText(resp.StatusCode), header: resp.Header, body: body}, nil
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

// statusError explains a non-2xx reply: 4xx are the request's fault
// (KindInvalid), anything else the service's (KindUnavailable). detail is a
// short excerpt of the reply; secrets are scrubbed by Execute.
func statusError(rp reply, what, detail string) error {
	kind := workflow.KindUnavailable
	if rp.status >= 400 && rp.status < 500 {
		kind = workflow.KindInvalid
	}
	msg := fmt.Sprintf("%s answered %d %s", what, rp.status, rp.statusText)
	if detail != "" {
		msg += ": " + detail
	}
	return workflow.Errorf(kind, "%s", msg)
}
