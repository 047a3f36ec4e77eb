package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// observation is what the transport saw of one attempt's HTTP exchange.
// langchaingo's clients flatten HTTP failures into strings, so the adapter
// learns the status code and Retry-After here instead of parsing messages.
type observation struct {
	mu         sync.Mutex
	reached    bool          // a request reached the transport
	status     int           // the last response's status code, 0 if none
	retryAfter time.Duration // the last response's Retry-After, 0 if none
	netErr     bool          // the last round trip failed below HTTP
	// unmarked says why the cache breakpoint could not be placed (nil
	// when it was, or when none was asked): the request went unmarked.
	unmarked error
}

func (o *observation) snapshot() (reached bool, status int, retryAfter time.Duration, netErr bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.reached, o.status, o.retryAfter, o.netErr
}

type observationKey struct{}

// withObservation returns ctx carrying obs for the transport to fill.
func withObservation(ctx context.Context, obs *observation) context.Context {
	return context.WithValue(ctx, observationKey{}, obs)
}

// observingTransport records status codes and Retry-After headers into the
// request context's observation, sets provider headers (the googleai
// key, which the Google client drops once it is given an HTTP client),
// and applies the context's body patch (what langchaingo cannot
// express: output.go, cache.go). It never mutates the caller's request.
type observingTransport struct {
	base   http.RoundTripper
	header http.Header // set on every request when absent
	now    func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *observingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			if req.Header.Get(k) == "" {
				req.Header[k] = vs
			}
		}
	}
	obs, _ := req.Context().Value(observationKey{}).(*observation)
	if patch := bodyPatchOf(req.Context()); !patch.empty() && req.Body != nil {
		patched, unmarked, err := patchBody(req, patch)
		if err != nil {
			return nil, err
		}
		if obs != nil {
			obs.mu.Lock()
			obs.unmarked = unmarked
			obs.mu.Unlock()
		}
		req = patched
	}
	resp, err := t.base.RoundTrip(req)
	if tap := streamTapOf(req.Context()); tap != nil && err == nil {
		tap.tapResponse(resp)
	}
	if obs == nil {
		return resp, err
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	obs.reached = true
	obs.netErr = err != nil
	if err != nil {
		obs.status = 0
		return resp, err
	}
	obs.status = resp.StatusCode
	obs.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), t.now())
	return resp, nil
}

// parseRetryAfter reads a Retry-After value in seconds or as an HTTP date,
// and returns 0 when it is absent, malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case secs <= 0:
			return 0
		case secs > math.MaxInt64/int64(time.Second):
			return math.MaxInt64 // longer than any wait allowed, not a wrapped one
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// newHTTPClient returns a client for the provider clients: a copy of base
// (or a fresh client) whose transport observes every exchange. base is not
// mutated. The client has no overall timeout: attempts are bounded by ctx.
func newHTTPClient(base *http.Client, header http.Header) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &observingTransport{base: rt, header: header, now: time.Now}
	return c
}

// bodyPatch is what the transport changes in a request's JSON body: what
// langchaingo v0.1.14 cannot express (output.go, cache.go). The zero value
// changes nothing.
type bodyPatch struct {
	// set holds top-level members to set, replacing any of the same name.
	set map[string]json.RawMessage
	// breakpoint is where Anthropic's cache_control goes (nil: nowhere);
	// sealed is where its second one goes (nil: nowhere).
	breakpoint, sealed *cacheBreakpoint
}

// newBodyPatch returns the patch of one call: its output plan's members
// and its cache markers.
func newBodyPatch(output map[string]json.RawMessage, cache cacheMarks) bodyPatch {
	p := bodyPatch{breakpoint: cache.breakpoint, sealed: cache.sealed}
	if len(output) > 0 || cache.key != "" {
		p.set = make(map[string]json.RawMessage, len(output)+1)
	}
	for k, v := range output {
		p.set[k] = v
	}
	if cache.key != "" {
		p.set["prompt_cache_key"], _ = json.Marshal(cache.key)
	}
	return p
}

func (p bodyPatch) empty() bool { return len(p.set) == 0 && p.breakpoint == nil && p.sealed == nil }

type bodyPatchKey struct{}

// withBodyPatch returns ctx carrying p for the transport to apply to the
// request body.
func withBodyPatch(ctx context.Context, p bodyPatch) context.Context {
	if p.empty() {
		return ctx
	}
	return context.WithValue(ctx, bodyPatchKey{}, p)
}

func bodyPatchOf(ctx context.Context) bodyPatch {
	p, _ := ctx.Value(bodyPatchKey{}).(bodyPatch)
	return p
}

// maxPatchedBody bounds a request body the transport rewrites.
const maxPatchedBody = 32 << 20

// patchBody returns a copy of req whose JSON object body has each member
// of p.set set (replacing one of the same name) and cache_control at
// p.breakpoint and p.sealed. req's body is consumed and closed. A breakpoint that does
// not fit the body leaves it unmarked, and unmarked says why: caching is
// an economy, the request is whole without it.
func patchBody(req *http.Request, p bodyPatch) (out *http.Request, unmarked error, err error) {
	raw, err := io.ReadAll(io.LimitReader(req.Body, maxPatchedBody+1))
	req.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the request body to patch: %w", err)
	}
	if len(raw) > maxPatchedBody {
		return nil, nil, errors.New("the request body is too large to patch")
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return nil, nil, errors.New("the request body to patch is not a JSON object")
	}
	for k, v := range p.set {
		body[k] = v
	}
	if p.breakpoint != nil {
		unmarked = p.breakpoint.apply(body)
	}
	if p.sealed != nil && unmarked == nil {
		unmarked = p.sealed.apply(body)
	}
	patched, err := json.Marshal(body)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the patched request body: %w", err)
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(patched))
	r.ContentLength = int64(len(patched))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(patched)), nil }
	return r, unmarked, nil
}
