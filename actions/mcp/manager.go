package mcp

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/textclip"
)

// sdkError is a JSON-RPC error answer: the server refused the request (as
// opposed to a broken connection).
type sdkError = jsonrpc.Error

// Mounter is where a Manager publishes each server's tools: *actions.Registry.
type Mounter interface {
	SetExternal(source string, list []actions.ExternalAction) map[string]error
}

var _ Mounter = (*actions.Registry)(nil)

// Options tune a Manager; zero values take the defaults documented on
// each field.
type Options struct {
	// Logger receives one line per connection change and skipped tool.
	Logger zerolog.Logger
	// Limits are the actions size caps (zero values: actions.DefaultLimits):
	// MaxResponseBytes bounds a result's text, MaxDocumentBytes each document.
	Limits actions.Limits
	// MinBackoff and MaxBackoff bound the wait between reconnects
	// (defaults 500ms and 30s); the wait doubles after each failure.
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds connecting, listing tools and a ping (10s).
	ConnectTimeout time.Duration
	// PingInterval is how often a connected server is pinged (15s).
	PingInterval time.Duration
	// StartWait bounds how long Start waits for every server's first
	// connection attempt (15s).
	StartWait time.Duration
	// Version is sent as the client's version.
	Version string
	// Transport, when set, replaces the transport built from a server's
	// config (tests connect in-memory servers this way).
	Transport func(ctx context.Context, cfg ServerConfig) (sdk.Transport, error)
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.MinBackoff, 500*time.Millisecond)
	def(&o.MaxBackoff, 30*time.Second)
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.PingInterval, 15*time.Second)
	def(&o.StartWait, 15*time.Second)
	d := actions.DefaultLimits()
	if o.Limits.MaxResponseBytes <= 0 {
		o.Limits.MaxResponseBytes = d.MaxResponseBytes
	}
	if o.Limits.MaxDocumentBytes <= 0 {
		o.Limits.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

func (o Options) caps() caps {
	return caps{text: o.Limits.MaxResponseBytes, document: o.Limits.MaxDocumentBytes}
}

// Manager owns one supervisor per configured server. Start launches them,
// Close stops them (and the stdio processes); Status reports each one.
type Manager struct {
	servers []*server
	opts    Options
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New prepares a Manager for cfg's servers, publishing tools into reg.
func New(cfg Config, reg Mounter, opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{opts: opts}
	for _, sc := range cfg.Servers {
		sc := sc
		connect := func(ctx context.Context) (sdk.Transport, error) { return transportFor(sc, opts.Logger) }
		if opts.Transport != nil {
			connect = func(ctx context.Context) (sdk.Transport, error) { return opts.Transport(ctx, sc) }
		}
		m.servers = append(m.servers, newServer(sc, reg, opts, opts.Logger, connect))
	}
	return m
}

// Start launches every supervisor and waits (up to Options.StartWait, or
// until ctx ends) for each one's first connection attempt, so the tools of
// reachable servers are listed when Start returns. A server that is not
// reachable does not fail Start: it is retried in the background.
func (m *Manager) Start(ctx context.Context) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	for _, s := range m.servers {
		m.wg.Go(func() { s.run(runCtx) })
	}
	wait := time.NewTimer(m.opts.StartWait)
	defer wait.Stop()
	for _, s := range m.servers {
		select {
		case <-s.tried:
		case <-wait.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Close stops every supervisor and waits for them: sessions are closed,
// stdio servers' stdin closed and their processes awaited (then signalled).
func (m *Manager) Close() error {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	return nil
}

// Status maps "mcp.<server>" to "ok" or why the server cannot be used now,
// for /readyz (a down MCP server degrades the gateway; it is never down
// because of one).
func (m *Manager) Status() map[string]string {
	out := make(map[string]string, len(m.servers))
	for _, s := range m.servers {
		out["mcp."+s.cfg.Name] = s.status()
	}
	return out
}

// transportFor builds the SDK transport of cfg: a fresh command for a stdio
// server (so a restart starts a new process), or a streamable-HTTP client
// that adds the configured headers.
func transportFor(cfg ServerConfig, log zerolog.Logger) (sdk.Transport, error) {
	if cfg.URL != "" {
		return &sdk.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: &http.Client{Transport: headerTransport{headers: cfg.Headers, base: http.DefaultTransport}},
			MaxRetries: 1,
		}, nil
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = serverEnv(cfg.Env)
	cmd.Stderr = stderrLogger(log.With().Str("mcpServer", cfg.Name).Logger())
	setProcAttr(cmd)
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

// inheritedEnv are the only variables of the gateway's environment a stdio
// server sees (beside its configured env): enough to find programs and
// write temporary files, never the gateway's keys and tokens.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// serverEnv returns a stdio server's environment.
func serverEnv(env map[string]string) []string {
	var out []string
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := env[k]; !override {
				out = append(out, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

// RoundTrip sends a copy of req with the configured headers set.
func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// stderrLogger returns a writer that logs each line a stdio server writes
// to stderr at debug level (the gateway's log redaction applies).
func stderrLogger(log zerolog.Logger) io.Writer {
	return &lineLogger{log: log}
}

// lineLogger logs whole lines; a line longer than 64 KiB is logged in parts.
type lineLogger struct {
	log zerolog.Logger
	mu  sync.Mutex
	buf []byte
}

// Write logs every complete line of p and keeps the rest for the next call.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) < 64<<10 {
			break
		}
		if i < 0 {
			i = len(l.buf)
		}
		line := string(bytes.TrimRight(l.buf[:i], "\r"))
		l.buf = l.buf[min(i+1, len(l.buf)):]
		if line != "" {
			l.log.Debug().Str("line", textclip.Clip(line, 2000)).Msg("MCP server stderr")
		}
	}
	return len(p), nil
}
