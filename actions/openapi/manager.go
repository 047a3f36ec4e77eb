package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Mounter is where a Manager publishes each source's operations:
// *actions.Registry.
type Mounter interface {
	SetOperations(source string, ops []actions.HTTPOperation) map[string]error
}

var _ Mounter = (*actions.Registry)(nil)

// Options tune a Manager; zero values take the defaults on each field.
type Options struct {
	// Logger receives one line per skipped operation and failed refresh.
	Logger zerolog.Logger
	// Client fetches URL documents (default: a plain client).
	Client *http.Client
	// FetchTimeout bounds one fetch of a document (30s).
	FetchTimeout time.Duration
	// MaxDocumentBytes caps a document (10 MiB).
	MaxDocumentBytes int64
	// RetryInterval is how soon a URL document never fetched is tried
	// again (30s, or its refresh interval when shorter).
	RetryInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	if o.MaxDocumentBytes <= 0 {
		o.MaxDocumentBytes = 10 << 20
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = 30 * time.Second
	}
	return o
}

// Manager loads every source's document, mounts its operations and keeps
// URL documents fresh. Load, then Start; Close stops the refreshes; Status
// reports each source for /readyz. Safe for concurrent use.
type Manager struct {
	sources []*source
	reg     Mounter
	opts    Options
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// source is one configured document and what became of it.
type source struct {
	cfg    SourceConfig
	mu     sync.Mutex
	status string // "ok", or why the source is degraded
	last   []byte // the last good document's bytes
	// origin is the scheme and host of the base URL the first good
	// document gave (no baseURL configured); later documents must keep it.
	origin string
}

// New prepares a Manager for cfg's sources, publishing into reg.
func New(cfg Config, reg Mounter, opts Options) *Manager {
	m := &Manager{reg: reg, opts: opts.withDefaults()}
	for _, sc := range cfg.Sources {
		m.sources = append(m.sources, &source{cfg: sc, status: "not loaded yet"})
	}
	return m
}

// Load reads every document once and mounts its operations. It returns
// every problem at once (a file that cannot be read, a document that does
// not parse or validate, an include or effects entry naming no operation,
// no usable base URL), as one KindInvalid error. A URL that cannot be
// fetched is not such a problem: the source is degraded (Status) and Start
// tries it again. Operations that cannot be expressed are logged and
// skipped.
func (m *Manager) Load(ctx context.Context) error {
	var problems []string
	for _, s := range m.sources {
		data, err := m.read(ctx, s.cfg)
		if err != nil && s.cfg.isURL() {
			s.setStatus("cannot fetch the document: " + err.Error())
			m.opts.Logger.Warn().Str("openapi", s.cfg.Name).Err(err).Msg("OpenAPI document not fetched; retrying")
			continue
		}
		if err == nil {
			err = m.apply(ctx, s, data)
		}
		if err != nil {
			problems = append(problems, strings.Split(err.Error(), "\n")...)
		}
	}
	if len(problems) > 0 {
		return workflow.Errorf(workflow.KindInvalid, "invalid openapiActions document:\n- %s", strings.Join(problems, "\n- "))
	}
	return nil
}

// Start launches one refresh loop per URL source; they stop at Close.
func (m *Manager) Start(ctx context.Context) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	for _, s := range m.sources {
		if s.cfg.isURL() {
			m.wg.Go(func() { m.refresh(runCtx, s) })
		}
	}
}

// Close stops the refresh loops and waits for them.
func (m *Manager) Close() error {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	return nil
}

// Status maps "openapi.<name>" to "ok" or why the source is degraded (a
// failed refresh keeps serving the last good document's operations).
func (m *Manager) Status() map[string]string {
	out := make(map[string]string, len(m.sources))
	for _, s := range m.sources {
		s.mu.Lock()
		out["openapi."+s.cfg.Name] = s.status
		s.mu.Unlock()
	}
	return out
}

// refresh fetches s's document every refresh interval (sooner while none
// was ever fetched) until ctx ends.
func (m *Manager) refresh(ctx context.Context, s *source) {
	every := s.cfg.Refresh
	if every <= 0 {
		every = DefaultRefresh
	}
	for {
		wait := every
		s.mu.Lock()
		if s.last == nil {
			wait = min(every, m.opts.RetryInterval)
		}
		s.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		data, err := m.read(ctx, s.cfg)
		if err == nil {
			err = m.apply(ctx, s, data)
		}
		if err != nil && ctx.Err() == nil {
			s.setStatus(degraded(s, err))
			m.opts.Logger.Warn().Str("openapi", s.cfg.Name).Str("error", textclip.Clip(err.Error(), 2000)).Msg("OpenAPI document refresh failed; keeping the last good one")
		}
	}
}

// degraded says why a refresh failed and what is served meanwhile.
func degraded(s *source, err error) string {
	s.mu.Lock()
	had := s.last != nil
	s.mu.Unlock()
	msg := "refresh failed: " + textclip.Clip(strings.ReplaceAll(err.Error(), "\n", "; "), 500)
	if had {
		return msg + " (serving the last good document)"
	}
	return msg + " (no document yet: its operations are not offered)"
}

// apply parses, validates and mounts data as s's document. Unchanged bytes
// are not mounted again.
func (m *Manager) apply(ctx context.Context, s *source, data []byte) error {
	s.mu.Lock()
	same := s.last != nil && bytes.Equal(s.last, data)
	s.mu.Unlock()
	if same {
		s.setStatus("ok")
		return nil
	}
	doc, err := m.parse(ctx, s.cfg, data)
	if err != nil {
		return err
	}
	base, err := baseURL(s.cfg, doc)
	if err == nil {
		err = s.keepOrigin(base)
	}
	if err != nil {
		return fmt.Errorf("openapiActions %s: %w", s.cfg.Name, err)
	}
	b, problems := operations(s.cfg, doc, base)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	for name, err := range m.reg.SetOperations("openapi."+s.cfg.Name, b.ops) {
		b.warnings = append(b.warnings, fmt.Sprintf("%s: operation %s skipped: %v", s.cfg.Name, name, err))
	}
	for _, w := range b.warnings {
		m.opts.Logger.Warn().Str("openapi", s.cfg.Name).Msg(w)
	}
	m.opts.Logger.Info().Str("openapi", s.cfg.Name).Int("operations", len(b.ops)).Int("skipped", len(b.warnings)).Msg("OpenAPI operations mounted")
	s.mu.Lock()
	s.last, s.status = data, "ok"
	s.mu.Unlock()
	return nil
}

// parse loads and validates a document. A fetched document may not refer
// to other files or URLs; a file may refer to files in its folder (after
// resolving links), never to a URL (the loader's own reader would fetch it
// with no timeout, size cap or cancellation). A load error never quotes
// the content of the file it read.
func (m *Manager) parse(ctx context.Context, src SourceConfig, data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = !src.isURL()
	location, _ := url.Parse(src.Spec)
	if !src.isURL() {
		f, resolved, err := openFolder(src.Spec, m.opts.MaxDocumentBytes)
		if err != nil {
			return nil, fmt.Errorf("openapiActions %s: %w", src.Name, err)
		}
		defer f.Close()
		loader.ReadFromURIFunc = f.loaderReader
		location = &url.URL{Path: filepath.ToSlash(resolved)}
	}
	doc, err := loader.LoadFromDataWithPath(data, location)
	if err != nil {
		return nil, fmt.Errorf("openapiActions %s: %s does not load: %s", src.Name, src.shownSpec(), withoutContent(err))
	}
	if err := doc.Validate(ctx, openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapiActions %s: %s is not a valid OpenAPI document: %w", src.Name, src.shownSpec(), err)
	}
	return doc, nil
}

// read returns a source's document: the file's content or the URL's 2xx
// body, within the size cap.
func (m *Manager) read(ctx context.Context, src SourceConfig) ([]byte, error) {
	if !src.isURL() {
		f, resolved, err := openFolder(src.Spec, m.opts.MaxDocumentBytes)
		if err != nil {
			return nil, fmt.Errorf("openapiActions %s: %w", src.Name, err)
		}
		defer f.Close()
		data, err := f.read(resolved)
		if err != nil {
			return nil, fmt.Errorf("openapiActions %s: %w", src.Name, err)
		}
		return data, nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.Spec, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", "twostep")
	resp, err := m.opts.Client.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			ue.URL = src.shownSpec()
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("GET %s answered %s", src.shownSpec(), resp.Status)
	}
	return cappedRead(resp.Body, src.shownSpec(), m.opts.MaxDocumentBytes)
}

// keepOrigin pins the origin (scheme and host) of the base URL a document
// gives when no baseURL is configured: the first good document's origin is
// kept, and a later document whose first server has another origin is
// refused, so a changed document cannot send the configured headers and
// the connection's credentials to a new host. (A configured baseURL is
// never taken from the document.)
func (s *source) keepOrigin(base string) error {
	if s.cfg.BaseURL != "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origin == "" {
		s.origin = origin
		return nil
	}
	if origin != s.origin {
		return fmt.Errorf("the document's first server moved from %s to %s; calls stay with the origin of the first document loaded (restart the gateway, or set baseURL, to change it)", s.origin, origin)
	}
	return nil
}

// setStatus records s's state for Status.
func (s *source) setStatus(status string) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}
