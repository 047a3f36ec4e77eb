// Package client is the Go client of the twostep gateway's /api/v1 routes:
// typed requests and answers, uploads from readers or files, the event
// stream as an iterator that reconnects with Last-Event-ID, problem+json
// errors as *Problem, and Run, which starts a workflow and waits for its
// answer. It depends on no server package; the JSON types are its own.
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twostep/twostep/apiv1"
)

// Client talks to one gateway as one user (or admin). It is safe for
// concurrent use.
type Client struct {
	base    *url.URL
	token   string
	http    *http.Client
	runWait time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with c (default: a client without a
// global timeout, since event streams and waits are long).
func WithHTTPClient(c *http.Client) Option { return func(cl *Client) { cl.http = c } }

// WithRunWait sets how long Run asks the gateway to hold its create
// request (Prefer: wait, default and at most a minute) before it follows
// the event stream instead.
func WithRunWait(d time.Duration) Option { return func(cl *Client) { cl.runWait = d } }

// New returns a Client for the gateway at baseURL (e.g.
// "http://localhost:8080") using the bearer token (a static token or a
// JWT; "" for a gateway in insecure dev mode).
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http(s) base URL", baseURL)
	}
	c := &Client{base: u, token: token, http: &http.Client{}, runWait: time.Minute}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Problem is an RFC 9457 problem the gateway answered with.
type Problem struct {
	Status int          `json:"status"`
	Title  string       `json:"title"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors"`
	// RetryAfter is the Retry-After of a 429 or 503 answer.
	RetryAfter time.Duration `json:"-"`
}

// FieldError names one failing field, e.g. body.documents[1].name.
type FieldError struct {
	Message  string `json:"message"`
	Location string `json:"location"`
	Value    any    `json:"value,omitempty"`
}

func (p *Problem) Error() string {
	msg := fmt.Sprintf("twostep: %d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	for _, e := range p.Errors {
		msg += "; " + e.Location + ": " + e.Message
	}
	return msg
}

// IsNotFound reports whether err is a 404 problem (a missing workflow, or
// another user's, which answers the same).
func IsNotFound(err error) bool {
	var p *Problem
	return errors.As(err, &p) && p.Status == http.StatusNotFound
}

// IsConflict reports whether err is a 409 problem (no running round, an
// approval already decided, ...).
func IsConflict(err error) bool {
	var p *Problem
	return errors.As(err, &p) && p.Status == http.StatusConflict
}

// Upload is a document to send: its name, media type ("" to derive it
// from the name) and bytes.
type Upload struct {
	Name     string
	MimeType string
	Content  io.Reader
}

// File is an Upload of the file at path, named by its base name. The file
// is read when the request is sent.
func File(path string) Upload {
	return Upload{Name: filepath.Base(path), MimeType: mime.TypeByExtension(filepath.Ext(path)), Content: &lazyFile{path: path}}
}

type lazyFile struct {
	path string
	f    *os.File
}

func (l *lazyFile) Read(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.Open(l.path)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	n, err := l.f.Read(p)
	if err == io.EOF {
		l.f.Close()
	}
	return n, err
}

// CreateRequest starts a workflow.
type CreateRequest struct {
	Prompt    string
	Mode      string // "react" (default) or "actionplan"
	MaxSteps  int    // 0: the gateway's default
	Documents []Upload
	// Wait asks the gateway to answer when the round ends or pauses, up
	// to this long (Prefer: wait, at most a minute); 0 answers at once.
	Wait time.Duration
	// Webhook, when set, receives the workflow's round events; the
	// answer's WebhookSecret verifies them (VerifyWebhook).
	Webhook *Webhook
}

// Result is the answer of a request that may wait for its round
// (apiv1.WorkflowResult: the workflow, the round's messages when it
// settled in time, a Create's WebhookSecret) and whether it waited.
type Result struct {
	apiv1.WorkflowResult
	// Waited reports that the gateway answered after the round settled
	// (Preference-Applied: wait).
	Waited bool `json:"-"`
}

// Answer is the text of the round's last assistant message ("" if none).
func (r *Result) Answer() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// uploadBody is the JSON body of fields (a body without documents) and
// docs, built in one buffer: each document is base64-encoded straight
// from its reader into the body, so an upload is held once, encoded, not
// three times.
func uploadBody(fields any, docs []Upload) (json.RawMessage, error) {
	head, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return head, nil
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1]) // without the closing brace
	b.WriteString(`,"documents":[`)
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(d.Name)
		b.WriteString(`{"name":`)
		b.Write(name)
		if d.MimeType != "" {
			mt, _ := json.Marshal(d.MimeType)
			b.WriteString(`,"mimeType":`)
			b.Write(mt)
		}
		b.WriteString(`,"content":"`)
		enc := base64.NewEncoder(base64.StdEncoding, &b)
		if d.Content != nil {
			if _, err := io.Copy(enc, d.Content); err != nil {
				return nil, fmt.Errorf("client: reading %s: %w", d.Name, err)
			}
		}
		enc.Close()
		b.WriteString(`"}`)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// Create starts a workflow and its first round.
func (c *Client) Create(ctx context.Context, req CreateRequest) (*Result, error) {
	body, err := uploadBody(apiv1.CreateWorkflowBody{Prompt: req.Prompt, Mode: req.Mode, MaxSteps: req.MaxSteps, Webhook: req.Webhook}, req.Documents)
	if err != nil {
		return nil, err
	}
	return c.waited(ctx, "POST", "/api/v1/workflows", body, req.Wait)
}

// StartRound starts the next round of a workflow with a prompt and
// documents; wait as for Create.
func (c *Client) StartRound(ctx context.Context, id, prompt string, wait time.Duration, docs ...Upload) (*Result, error) {
	body, err := uploadBody(apiv1.NewRoundBody{Prompt: prompt}, docs)
	if err != nil {
		return nil, err
	}
	return c.waited(ctx, "POST", "/api/v1/workflows/"+url.PathEscape(id)+"/rounds", body, wait)
}

// QueueRound starts the next round like StartRound when no round runs;
// while one runs or awaits approval, onBusy decides: "enqueue" queues the
// round behind it, "interrupt" queues it first and ends the running round
// at its next safe point, "reject" (or "") fails with 409 as StartRound
// does. The answer is the workflow with its QueuedRounds.
func (c *Client) QueueRound(ctx context.Context, id, prompt, onBusy string, docs ...Upload) (*Result, error) {
	body, err := uploadBody(apiv1.NewRoundBody{Prompt: prompt}, docs)
	if err != nil {
		return nil, err
	}
	path := "/api/v1/workflows/" + url.PathEscape(id) + "/rounds"
	if onBusy != "" {
		path += "?onBusy=" + url.QueryEscape(onBusy)
	}
	return c.waited(ctx, "POST", path, body, 0)
}

// Decision answers a pending approval.
type Decision struct {
	Approve    bool
	Parameters map[string]any // on approve: edited parameters (nil keeps them)
	Comment    string
	// Constraints, on approving an intent, narrow what Stage 2 may fill:
	// a JSON Schema fragment per field, e.g. {"priority": {"maximum": 2}}.
	Constraints map[string]map[string]any
	// Remember, on approve, keeps the decision standing.
	Remember *Remember
}

// Remember keeps a decision standing for later calls of the action: Scope
// is "workflow" or "user"; TTL, when positive, bounds how long.
type Remember struct {
	Scope string
	TTL   time.Duration
}

// Decide approves or rejects the pending approval of a paused round;
// wait as for Create.
func (c *Client) Decide(ctx context.Context, id, approvalID string, d Decision, wait time.Duration) (*Result, error) {
	body := apiv1.DecisionBody{Decision: "reject", Comment: d.Comment}
	if d.Approve {
		body.Decision, body.Parameters, body.Constraints = "approve", d.Parameters, d.Constraints
		if r := d.Remember; r != nil {
			body.Remember = &apiv1.RememberBody{Scope: r.Scope}
			if r.TTL > 0 {
				body.Remember.TTL = r.TTL.String()
			}
		}
	}
	return c.waited(ctx, "POST", "/api/v1/workflows/"+url.PathEscape(id)+"/approvals/"+url.PathEscape(approvalID), body, wait)
}

// StandingApprovals lists the caller's standing approvals.
func (c *Client) StandingApprovals(ctx context.Context) ([]StandingApproval, error) {
	var out apiv1.StandingApprovalList
	_, err := c.do(ctx, "GET", "/api/v1/approvals/standing", nil, nil, &out)
	return out.Approvals, err
}

// RevokeStanding deletes one of the caller's standing approvals: the next
// call it would have admitted pauses instead.
func (c *Client) RevokeStanding(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/approvals/standing/"+url.PathEscape(id), nil, nil, nil)
	return err
}

func (c *Client) waited(ctx context.Context, method, path string, body any, wait time.Duration) (*Result, error) {
	var hdr http.Header
	if wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		hdr = http.Header{"Prefer": {"wait=" + strconv.Itoa(min(secs, 60))}}
	}
	var r Result
	resp, err := c.do(ctx, method, path, body, hdr, &r)
	if err != nil {
		return nil, err
	}
	r.Waited = resp.Header.Get("Preference-Applied") == "wait"
	return &r, nil
}

// Get returns a workflow.
func (c *Client) Get(ctx context.Context, id string) (*Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, "GET", "/api/v1/workflows/"+url.PathEscape(id), nil, nil, &w)
	return &w, err
}

// ListOptions pages and filters List.
type ListOptions struct {
	Limit  int
	Cursor string
	Status string // e.g. "awaiting_approval"
}

// List returns one page of the user's workflows.
func (c *Client) List(ctx context.Context, o ListOptions) (*Page, error) {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if o.Status != "" {
		q.Set("status", o.Status)
	}
	path := "/api/v1/workflows"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var p Page
	_, err := c.do(ctx, "GET", path, nil, nil, &p)
	return &p, err
}

// ListAll returns every workflow of the user, newest first, following
// the pages (o.Limit sets their size); an error ends the sequence.
func (c *Client) ListAll(ctx context.Context, o ListOptions) iter.Seq2[Workflow, error] {
	return func(yield func(Workflow, error) bool) {
		for {
			page, err := c.List(ctx, o)
			if err != nil {
				yield(Workflow{}, err)
				return
			}
			for _, w := range page.Workflows {
				if !yield(w, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			o.Cursor = page.NextCursor
		}
	}
}

// Stop stops the running (or paused) round.
func (c *Client) Stop(ctx context.Context, id string) (*Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, "POST", "/api/v1/workflows/"+url.PathEscape(id)+"/stop", nil, nil, &w)
	return &w, err
}

// Resume continues a failed or stopped round from its checkpoint.
func (c *Client) Resume(ctx context.Context, id string) (*Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, "POST", "/api/v1/workflows/"+url.PathEscape(id)+"/resume", nil, nil, &w)
	return &w, err
}

// Fork creates a new workflow from the messages of workflow id before the
// step req names, running from that step (POST .../fork); the original is
// not changed. An edit a live step would refuse is a *Problem with status
// 422, one error per problem.
func (c *Client) Fork(ctx context.Context, id string, req ForkRequest) (*Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, "POST", "/api/v1/workflows/"+url.PathEscape(id)+"/fork", req, nil, &w)
	return &w, err
}

// Delete removes a workflow and everything it owns.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/workflows/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Messages returns the workflow's messages with seq > after, in order.
func (c *Client) Messages(ctx context.Context, id string, after int64) ([]Message, error) {
	var out apiv1.MessageList
	path := "/api/v1/workflows/" + url.PathEscape(id) + "/messages"
	if after > 0 {
		path += "?after=" + strconv.FormatInt(after, 10)
	}
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out.Messages, err
}

// Document returns a document's bytes and media type; close the reader.
func (c *Client) Document(ctx context.Context, id, docID string) (io.ReadCloser, string, error) {
	resp, err := c.send(ctx, "GET", "/api/v1/workflows/"+url.PathEscape(id)+"/documents/"+url.PathEscape(docID), nil, nil)
	if err != nil {
		return nil, "", err
	}
	return resp.Body, resp.Header.Get("Content-Type"), nil
}

// Actions lists the actions the gateway offers.
func (c *Client) Actions(ctx context.Context) ([]Action, error) {
	var out apiv1.ActionList
	_, err := c.do(ctx, "GET", "/api/v1/actions", nil, nil, &out)
	return out.Actions, err
}

// do sends a JSON request and decodes a JSON answer into out (when not
// nil); a problem answer is a *Problem.
func (c *Client) do(ctx context.Context, method, path string, body any, hdr http.Header, out any) (*http.Response, error) {
	resp, err := c.send(ctx, method, path, body, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("client: decoding the answer to %s %s: %w", method, path, err)
		}
	}
	return resp, nil
}

// send sends a request and returns a 2xx response (its body open), or the
// answer as a *Problem.
func (c *Client) send(ctx context.Context, method, path string, body any, hdr http.Header) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		data, ok := body.(json.RawMessage)
		if !ok {
			var err error
			if data, err = json.Marshal(body); err != nil {
				return nil, err
			}
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, r)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	p := &Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = json.Unmarshal(data, p)
	p.Status = resp.StatusCode
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		p.RetryAfter = time.Duration(s) * time.Second
	}
	return nil, p
}
