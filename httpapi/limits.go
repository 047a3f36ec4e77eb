package httpapi

import (
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/httpapi/upload"
	"github.com/twostep/twostep/workflow"
)

// Limits bound what one request may ask for. Zero fields take the defaults
// documented on each; every limit answers a clear 4xx when exceeded.
type Limits struct {
	// MaxBodyBytes caps a request body (default 32 MiB, answered with 413).
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// MaxDocuments caps documents per request (default 20).
	MaxDocuments int `yaml:"maxDocuments"`
	// MaxDocumentBytes caps one decoded upload (default 10 MiB; YAML
	// limits.maxUploadBytes, answered with 413).
	MaxDocumentBytes int64 `yaml:"maxUploadBytes"`
	// MaxPromptChars caps a prompt in characters (default 20,000).
	MaxPromptChars int `yaml:"maxPromptChars"`
	// RetryAfter is sent with 429 and 503 answers (default 5 s).
	RetryAfter time.Duration `yaml:"retryAfter"`
	// MaxInflightUploadBytes caps the request-body bytes received and not
	// yet answered across the process (default 128 MiB): a body reserves
	// its bytes as they arrive, not as declared, until its request is
	// answered, and one that does not fit gets 503 with Retry-After instead
	// of growing the process's memory.
	MaxInflightUploadBytes int64 `yaml:"maxInflightUploadBytes"`
	// MaxInflightUploadBytesPerUser caps one user's share of those bytes,
	// over all its connections (default a quarter of
	// MaxInflightUploadBytes, at least MaxBodyBytes). One connection's
	// share is MaxBodyBytes.
	MaxInflightUploadBytesPerUser int64 `yaml:"maxInflightUploadBytesPerUser"`
	// MinUploadBytesPerSecond is the slowest a body may arrive once
	// UploadRateGrace has passed (default 8 KiB/s); a slower one is
	// dropped with 408, so trickled bodies do not hold connections.
	MinUploadBytesPerSecond int64 `yaml:"minUploadBytesPerSecond"`
	// UploadRateGrace is how long a body may take before the minimum rate
	// applies (default 5 s).
	UploadRateGrace time.Duration `yaml:"uploadRateGrace"`
	// IdempotencyWindow is how long the answer to a request sent with an
	// Idempotency-Key is kept for replay (default 24h, DESIGN §10.3).
	IdempotencyWindow time.Duration `yaml:"idempotencyWindow"`
	// IdempotencyBytesPerUser bounds what one user's kept answers hold
	// (default 8 MiB, workflow.IdempotentAnswer.Size): past it, the
	// answers that expire first are dropped.
	IdempotencyBytesPerUser int64 `yaml:"idempotencyBytesPerUser"`
}

const maxNameLen = 255

func (l Limits) withDefaults() (Limits, error) {
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = 32 << 20
	}
	if l.MaxDocuments == 0 {
		l.MaxDocuments = 20
	}
	if l.MaxDocumentBytes == 0 {
		l.MaxDocumentBytes = 10 << 20
	}
	if l.MaxPromptChars == 0 {
		l.MaxPromptChars = 20000
	}
	if l.RetryAfter == 0 {
		l.RetryAfter = 5 * time.Second
	}
	if l.MaxInflightUploadBytes == 0 {
		l.MaxInflightUploadBytes = max(128<<20, l.MaxBodyBytes)
	}
	if l.MaxInflightUploadBytesPerUser == 0 {
		l.MaxInflightUploadBytesPerUser = min(l.MaxInflightUploadBytes, max(l.MaxBodyBytes, l.MaxInflightUploadBytes/4))
	}
	if l.MinUploadBytesPerSecond == 0 {
		l.MinUploadBytesPerSecond = 8 << 10
	}
	if l.UploadRateGrace == 0 {
		l.UploadRateGrace = 5 * time.Second
	}
	if l.IdempotencyWindow == 0 {
		l.IdempotencyWindow = workflow.DefaultIdempotencyWindow
	}
	if l.IdempotencyBytesPerUser == 0 {
		l.IdempotencyBytesPerUser = workflow.DefaultIdempotencyBytesPerUser
	}
	return l, l.Validate()
}

// Validate reports every negative or too small limit at once.
func (l Limits) Validate() error {
	var errs []error
	if l.MaxBodyBytes < 0 || l.MaxDocuments < 0 || l.MaxDocumentBytes < 0 || l.MaxPromptChars < 0 {
		errs = append(errs, errors.New("limits must not be negative"))
	}
	if l.RetryAfter < 0 || l.UploadRateGrace < 0 {
		errs = append(errs, errors.New("limits.retryAfter and limits.uploadRateGrace must not be negative"))
	}
	if l.MinUploadBytesPerSecond < 0 {
		errs = append(errs, errors.New("limits.minUploadBytesPerSecond must not be negative"))
	}
	if l.MaxInflightUploadBytesPerUser != 0 && (l.MaxInflightUploadBytesPerUser < l.MaxBodyBytes ||
		l.MaxInflightUploadBytes != 0 && l.MaxInflightUploadBytesPerUser > l.MaxInflightUploadBytes) {
		errs = append(errs, errors.New("limits.maxInflightUploadBytesPerUser must be between limits.maxBodyBytes and limits.maxInflightUploadBytes"))
	}
	if l.IdempotencyWindow < 0 || l.IdempotencyBytesPerUser < 0 {
		errs = append(errs, errors.New("limits.idempotencyWindow and limits.idempotencyBytesPerUser must not be negative"))
	}
	if l.MaxInflightUploadBytes != 0 && l.MaxInflightUploadBytes < l.MaxBodyBytes {
		errs = append(errs, errors.New("limits.maxInflightUploadBytes must be at least limits.maxBodyBytes, or no full-size request could ever be taken"))
	}
	return errors.Join(errs...)
}

// setMaxDocuments writes the document limit into the documents array of
// the request body schema of POST path as maxItems, so the OpenAPI
// document states it and huma's validation applies it too (the body
// stream already stops at the limit while reading).
func setMaxDocuments(api huma.API, path string, n int) {
	op := api.OpenAPI().Paths[path].Post
	reg := api.OpenAPI().Components.Schemas
	body := reg.SchemaFromRef(op.RequestBody.Content["application/json"].Schema.Ref)
	docs := body.Properties["documents"]
	docs.MaxItems = &n
	docs.PrecomputeMessages()
}

// checkPrompt rejects an empty or over-long prompt.
func (l Limits) checkPrompt(prompt string) error {
	if strings.TrimSpace(prompt) == "" {
		return invalid("body.prompt", "prompt must not be blank", nil)
	}
	if n := utf8.RuneCountInString(prompt); n > l.MaxPromptChars {
		return invalid("body.prompt", fmt.Sprintf("prompt has %d characters; the limit is %d (limits.maxPromptChars)", n, l.MaxPromptChars), nil)
	}
	return nil
}

// decodeDocuments validates and decodes uploads. Every invalid document
// is reported in one 422 (one error per problem, each naming its
// document); an oversized document answers 413 at once. A content the
// body stream already decoded (streamUploads) is taken from stash.
func (l Limits) decodeDocuments(in []apiv1.DocumentInput, stash *upload.Stash) ([]workflow.DocumentContent, error) {
	if len(in) > l.MaxDocuments {
		return nil, invalid("body.documents", fmt.Sprintf("%d documents sent; the limit is %d per request (limits.maxDocuments)", len(in), l.MaxDocuments), nil)
	}
	out := make([]workflow.DocumentContent, 0, len(in))
	seen := make(map[string]bool, len(in))
	var problems []*huma.ErrorDetail
	bad := func(location, msg string, value any) {
		problems = append(problems, &huma.ErrorDetail{Location: location, Message: msg, Value: value})
	}
	for i, d := range in {
		loc := fmt.Sprintf("body.documents[%d]", i)
		if err := checkDocumentName(d.Name); err != nil {
			bad(loc+".name", err.Error(), d.Name)
		} else if seen[d.Name] {
			bad(loc+".name", fmt.Sprintf("duplicate document name %q in this request", d.Name), d.Name)
		}
		seen[d.Name] = true
		mt, err := documentMimeType(d.Name, d.MimeType)
		if err != nil {
			bad(loc+".mimeType", err.Error(), d.MimeType)
		}
		content, problem, over := stash.Content(i, d.Content, l.MaxDocumentBytes)
		if over {
			return nil, tooLarge(loc, l.MaxDocumentBytes)
		}
		if problem != "" {
			bad(loc+".content", problem, nil)
			continue
		}
		if int64(len(content)) > l.MaxDocumentBytes {
			return nil, tooLarge(loc, l.MaxDocumentBytes)
		}
		out = append(out, workflow.DocumentContent{
			Document: workflow.Document{Name: d.Name, MimeType: mt, Size: int64(len(content))},
			Content:  content,
		})
	}
	switch len(problems) {
	case 0:
		return out, nil
	case 1:
		return nil, invalid(problems[0].Location, problems[0].Message, problems[0].Value)
	}
	return nil, huma.Error422UnprocessableEntity(fmt.Sprintf("request is invalid: %d problems with the documents", len(problems)), problemErrors(problems)...)
}

func problemErrors(details []*huma.ErrorDetail) []error {
	out := make([]error, len(details))
	for i, d := range details {
		out[i] = d
	}
	return out
}

// checkDocumentName rejects names that could be read as paths or that
// carry invisible characters.
func checkDocumentName(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) == "":
		return errors.New("name must not be blank")
	case len(name) > maxNameLen:
		return fmt.Errorf("name is longer than %d bytes", maxNameLen)
	case !utf8.ValidString(name):
		return errors.New("name is not valid UTF-8")
	case strings.ContainsAny(name, `/\`):
		return errors.New("name must not contain path separators")
	case name == "." || strings.Contains(name, ".."):
		return errors.New("name must not contain '..'")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("name must not contain control characters")
	case strings.ContainsRune(name, ':'):
		return errors.New("name must not contain ':' (it separates parts of document references)")
	}
	return nil
}

func documentMimeType(name, given string) (string, error) {
	if given == "" {
		if t := mime.TypeByExtension(path.Ext(name)); t != "" {
			return t, nil
		}
		return "application/octet-stream", nil
	}
	if _, _, err := mime.ParseMediaType(given); err != nil || !strings.Contains(given, "/") {
		return "", fmt.Errorf("%q is not a media type such as text/plain", given)
	}
	return given, nil
}
