package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// toolNamePattern is the MCP tool-name charset; other names are skipped
// (they could not be written as an action name).
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// maxDescription bounds a tool's description, in bytes.
const maxDescription = 1000

// server supervises one MCP server: it connects, lists the tools into the
// registry, follows list changes, notices a dead connection and reconnects
// with backoff until its context ends.
type server struct {
	cfg     ServerConfig
	reg     Mounter
	log     zerolog.Logger
	opts    Options
	connect func(ctx context.Context) (sdk.Transport, error)
	client  *sdk.Client

	refresh chan struct{} // list_changed (buffered 1)
	broken  chan struct{} // a call saw the connection fail (buffered 1)
	tried   chan struct{} // closed after the first connection attempt
	once    sync.Once

	mu      sync.Mutex
	session *sdk.ClientSession // nil while down
	reason  string             // why it is down ("" while up)
}

// newServer prepares the supervisor of cfg; run starts it.
func newServer(cfg ServerConfig, reg Mounter, opts Options, log zerolog.Logger, connect func(ctx context.Context) (sdk.Transport, error)) *server {
	s := &server{
		cfg: cfg, reg: reg, opts: opts, connect: connect,
		log:     log.With().Str("mcpServer", cfg.Name).Logger(),
		refresh: make(chan struct{}, 1),
		broken:  make(chan struct{}, 1),
		tried:   make(chan struct{}),
		reason:  "not connected yet",
	}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "twostep", Version: opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { signal(s.refresh) },
	})
	return s
}

// signal wakes the receiver of ch without ever blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run keeps the server connected until ctx ends, then closes the session
// (which stops a stdio server's process).
func (s *server) run(ctx context.Context) {
	backoff := s.opts.MinBackoff
	for ctx.Err() == nil {
		started := time.Now()
		err := s.session1(ctx)
		s.markTried()
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > s.opts.MaxBackoff {
			backoff = s.opts.MinBackoff // it ran well for a while: retry soon
		}
		s.log.Warn().Str("reason", err.Error()).Dur("retryIn", backoff).Msg("MCP server unreachable")
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, s.opts.MaxBackoff)
	}
}

// session1 runs one session from connect to its end and returns why it
// ended (never nil).
func (s *server) session1(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	t, err := s.connect(cctx)
	var cs *sdk.ClientSession
	if err == nil {
		cs, err = s.client.Connect(cctx, t, nil)
	}
	cancel()
	if err != nil {
		err = fmt.Errorf("cannot connect: %w", err)
		s.setDown(err.Error())
		return err
	}
	defer cs.Close()
	drain(s.broken)
	drain(s.refresh)
	if err := s.listTools(ctx, cs); err != nil {
		s.setDown(err.Error())
		return err
	}
	s.setUp(cs)
	s.markTried()
	s.log.Info().Msg("MCP server connected")
	ended := make(chan struct{})
	go func() { _ = cs.Wait(); close(ended) }()
	defer func() { _ = cs.Close(); <-ended }() // Close ends Wait: the goroutine is done
	ping := time.NewTicker(s.opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			s.setDown("the gateway is shutting down")
			return ctx.Err()
		case <-ended:
			s.setDown("the connection closed")
			return errors.New("the connection closed")
		case <-s.refresh:
			if err := s.listTools(ctx, cs); err != nil {
				s.setDown(err.Error())
				return err
			}
		case <-s.broken:
			if err := s.ping(ctx, cs); err != nil {
				return err
			}
		case <-ping.C:
			if err := s.ping(ctx, cs); err != nil {
				return err
			}
		}
	}
}

// ping checks the session; a failure marks the server down.
func (s *server) ping(ctx context.Context, cs *sdk.ClientSession) error {
	pctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	if err := cs.Ping(pctx, nil); err != nil {
		err = fmt.Errorf("it does not answer: %w", err)
		s.setDown(err.Error())
		return err
	}
	return nil
}

// markTried tells Start the first connection attempt is over.
func (s *server) markTried() { s.once.Do(func() { close(s.tried) }) }

func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// setUp publishes cs as the session calls use.
func (s *server) setUp(cs *sdk.ClientSession) {
	s.mu.Lock()
	s.session, s.reason = cs, ""
	s.mu.Unlock()
}

// setDown records why the server cannot be used; its tools stay listed
// and fail as steps with reason until it is back.
func (s *server) setDown(reason string) {
	s.mu.Lock()
	s.session, s.reason = nil, reason
	s.mu.Unlock()
}

// current returns the live session, or nil and why there is none.
func (s *server) current() (*sdk.ClientSession, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session, s.reason
}

// status is "ok" or why the server is down.
func (s *server) status() string {
	if _, reason := s.current(); reason != "" {
		return reason
	}
	return "ok"
}

// listTools reads every page of tools/list and mounts the tools.
func (s *server) listTools(ctx context.Context, cs *sdk.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	var tools []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for range 100 { // at most 100 pages
		res, err := cs.ListTools(lctx, params)
		if err != nil {
			return fmt.Errorf("cannot list its tools: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	s.mount(tools)
	return nil
}

// mount turns tools into actions and hands them to the registry, logging
// each tool that is skipped and why.
func (s *server) mount(tools []*sdk.Tool) {
	var list []actions.ExternalAction
	for _, t := range tools {
		if t == nil {
			continue
		}
		if !toolNamePattern.MatchString(t.Name) {
			s.log.Warn().Str("tool", textclip.Clip(t.Name, 80)).Msg("MCP tool skipped: its name is not letters, digits, '_', '-' and '.'")
			continue
		}
		schema, ok := t.InputSchema.(map[string]any)
		if !ok {
			s.log.Warn().Str("tool", t.Name).Msg("MCP tool skipped: its inputSchema is not a JSON object")
			continue
		}
		list = append(list, s.action(t, schema))
	}
	skipped := s.reg.SetExternal(s.cfg.Name, list)
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		s.log.Warn().Str("action", name).Str("reason", skipped[name].Error()).Msg("MCP tool skipped")
	}
	s.log.Info().Int("tools", len(list)-len(skipped)).Int("skipped", len(tools)-len(list)+len(skipped)).Msg("MCP tools listed")
}

// action describes tool t as the action mcp.<server>.<tool>.
func (s *server) action(t *sdk.Tool, schema map[string]any) actions.ExternalAction {
	name := "mcp." + s.cfg.Name + "." + t.Name
	effect := workflow.EffectWrite
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		effect = workflow.EffectRead
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	// The description is the server's text in every Stage 1 prompt: bound
	// it, so one verbose (or hostile) server cannot crowd out the rest.
	desc = textclip.Clip(strings.TrimSpace(desc), maxDescription)
	tool := t.Name
	return actions.ExternalAction{
		Spec: workflow.ActionSpec{
			Name: name, Description: desc, Effect: effect,
			Documents: workflow.DocumentsNone, Server: s.cfg.Name,
		},
		Schema: schema,
		User:   s.cfg.User,
		Run: func(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
			return s.call(ctx, name, tool, call.Parameters)
		},
	}
}

// call runs tools/call on the live session under the per-call timeout.
func (s *server) call(ctx context.Context, action, tool string, params map[string]any) (workflow.ActionResult, error) {
	cs, reason := s.current()
	if cs == nil {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindUnavailable,
			"MCP server %s is unreachable (%s): %s cannot run now; choose another action or try later", s.cfg.Name, reason, action)
	}
	timeout := s.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: params})
	switch {
	case err == nil:
		return mapResult(action, res, s.opts.caps())
	case ctx.Err() != nil:
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindUnavailable, err, "%s was cancelled", action)
	case cctx.Err() != nil:
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindUnavailable, err,
			"%s did not answer within %s: ask for less or try later", action, timeout)
	}
	var rpcErr *sdkError
	if errors.As(err, &rpcErr) && !transportCode(rpcErr.Code) {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInvalid, err,
			"MCP server %s refused %s: %s", s.cfg.Name, action, textclip.Clip(rpcErr.Message, 500))
	}
	signal(s.broken) // let the supervisor check the connection
	return workflow.ActionResult{}, workflow.WrapKind(workflow.KindUnavailable, err,
		"MCP server %s is unreachable: %s failed (the connection broke); choose another action or try later", s.cfg.Name, action)
}

// transportCode reports whether a JSON-RPC error code is the SDK's way of
// saying the request never got an answer (the transport rejected it, or
// either side is closing), as opposed to the server refusing it: the
// streamable-HTTP client reports a dead server as "rejected by transport".
func transportCode(code int64) bool {
	switch code {
	case -32005, -32004, -32003: // rejected by transport, server closing, client closing
		return true
	}
	return false
}
