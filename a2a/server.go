package a2a

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/workflow"
)

// The paths the server answers.
const (
	CardPath = "/.well-known/agent-card.json"
	RPCPath  = "/a2a"
)

// Engine is the part of *engine.Engine the server drives; every method is
// scoped to userID (another user's workflow is KindNotFound).
type Engine interface {
	Create(ctx context.Context, in engine.NewWorkflow) (*workflow.Workflow, error)
	StartRound(ctx context.Context, userID, id string, in engine.NewRound) (*workflow.Workflow, error)
	Stop(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	Decide(ctx context.Context, userID, id, approvalID string, d workflow.Decision) (*workflow.Workflow, error)
}

// Reads is what the server reads: the caller's own workflows and their
// messages (*engine.Engine, *engine.Reader).
type Reads interface {
	Get(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error)
	MessagesOf(ctx context.Context, userID string, wf *workflow.Workflow, after int64, limit int) ([]workflow.Message, error)
}

// Subscriptions reads a workflow's webhook subscription (the store's
// workflow.WebhookOutbox) for the push notification config reads.
type Subscriptions interface {
	WebhookSubscription(ctx context.Context, workflowID string) (*workflow.WebhookSubscription, error)
}

// Options wires a Server. Engine, Reads, Actions and Changes are required.
type Options struct {
	Engine  Engine
	Reads   Reads
	Actions interface{ Actions() []workflow.ActionSpec }
	// Changes tells waiting sends and streams of this instance's commits;
	// the store is read every Poll too (another instance's commits).
	Changes workflow.Changes
	// Limits are the /api limits: the body, prompt and documents bounds
	// and the Idempotency-Key window.
	Limits httpapi.Limits
	// Idempotency keeps a messageId's task (nil: a repeated messageId
	// starts another task).
	Idempotency workflow.IdempotencyStore
	// CheckPushURL checks a push notification URL with the webhook address
	// rules; nil: push notifications are not supported.
	CheckPushURL func(string) error
	// Subscriptions reads push configs back (nil: none are listed).
	Subscriptions Subscriptions
	// Version is the card's version.
	Version string
	// Poll is how often a waiting request reads the store (0: 250ms);
	// Heartbeat how often an idle stream sends a comment (0: 15s);
	// WriteTimeout bounds each stream frame's write (0: 2 minutes);
	// MaxWait bounds how long a blocking SendMessage waits for its task
	// to settle before answering it working (0: 5 minutes).
	Poll, Heartbeat, WriteTimeout, MaxWait time.Duration
	Logger                                 zerolog.Logger
}

// Server is the A2A server. It holds no per-request state.
type Server struct {
	opts   Options
	limits httpapi.Limits
	// closing is closed by Close to end every stream.
	closing   chan struct{}
	closeOnce sync.Once
}

// New checks opts and returns the server.
func New(opts Options) (*Server, error) {
	var errs []error
	if opts.Engine == nil || opts.Reads == nil || opts.Actions == nil || opts.Changes == nil {
		errs = append(errs, errors.New("a2a: Engine, Reads, Actions and Changes are required"))
	}
	l, err := opts.Limits.Effective()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, workflow.WrapKind(workflow.KindInvalid, errors.Join(errs...), "a2a.New")
	}
	opts.Poll = orDefault(opts.Poll, 250*time.Millisecond)
	opts.Heartbeat = orDefault(opts.Heartbeat, 15*time.Second)
	opts.WriteTimeout = orDefault(opts.WriteTimeout, 2*time.Minute)
	opts.MaxWait = orDefault(opts.MaxWait, 5*time.Minute)
	return &Server{opts: opts, limits: l, closing: make(chan struct{})}, nil
}

// Mount returns the routes to serve beside /api: the JSON-RPC endpoint
// and the HTTP+JSON routes with a user token, the agent card without one.
func (s *Server) Mount() httpapi.Mount {
	return httpapi.Mount{Paths: []string{RPCPath}, Prefixes: []string{RESTPath}, Public: []string{CardPath}, Handler: s, Close: s.Close}
}

// Close ends every open stream (and any opened later) after its current
// frame, so a shutdown need not wait for tasks that go on: the caller
// subscribes again elsewhere. It is safe to call more than once.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// ServeHTTP serves the card and the JSON-RPC endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == CardPath && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.serveCard(w, r)
	case r.URL.Path == RPCPath && r.Method == http.MethodPost:
		s.serveRPC(w, r)
	case strings.HasPrefix(r.URL.Path, RESTPath+"/"):
		s.serveREST(w, r)
	default:
		w.Header().Set("Allow", map[bool]string{true: "GET, HEAD", false: "POST"}[r.URL.Path == CardPath])
		writeRPC(w, http.StatusMethodNotAllowed, response{ID: nullID, Error: newError(codeInvalidRequest,
			"method "+r.Method+" is not allowed on "+r.URL.Path)})
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
