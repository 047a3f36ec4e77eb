package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/twostep/twostep/outbound"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// ParamIn says where an HTTPOperation sends one parameter.
type ParamIn string

// Where parameters go (DESIGN §10.2).
const (
	// InPath fills the {name} placeholder of the path, escaped.
	InPath ParamIn = "path"
	// InQuery sends the parameter as a query parameter (arrays repeated).
	InQuery ParamIn = "query"
	// InHeader sends the parameter as a request header of its name.
	InHeader ParamIn = "header"
	// InBody sends the parameter's value as the whole JSON body.
	InBody ParamIn = "body"
	// InBodyField sends the parameter as a field of a JSON object body.
	InBodyField ParamIn = "bodyField"
)

// placeholderPattern finds {name} placeholders in a path template.
var placeholderPattern = regexp.MustCompile(`\{([^{}/]+)\}`)

// HTTPOperation is an action served by one operation of a REST service: an
// OpenAPI operation (actions/openapi) or a declared httpActions entry with
// `body: parameters`. The registry validates each call against Schema,
// then sends Method to BaseURL+Path with every parameter where Params puts
// it, under the rules of http.request: only BaseURL's scheme, host and
// path prefix (redirects included), the size caps, Idempotency-Key and
// X-Fencing-Token, and secrets scrubbed from the result and the error.
type HTTPOperation struct {
	// Spec is the public description; its Parameters are replaced by
	// Schema's JSON text, HTTPMethod and HTTPPath by Method and Path.
	Spec workflow.ActionSpec
	// Schema is the JSON Schema object of the parameters (decoded JSON).
	Schema map[string]any
	// Method is the HTTP method, upper case.
	Method string
	// BaseURL is the absolute http(s) URL the path is appended to.
	BaseURL string
	// Path is the path template below BaseURL: "/tickets/{id}".
	Path string
	// Params says where each top-level parameter goes; Rest where those
	// it does not list go ("" drops them).
	Params map[string]ParamIn
	Rest   ParamIn
	// Headers are sent with every call (resolved secrets included).
	Headers map[string]string
	// Connection, when set, is the label of the caller's connection whose
	// headers are added to every call; a caller without one is refused.
	Connection string
	// Timeout bounds one call; 0 means Limits.HTTPTimeout.
	Timeout time.Duration
}

// operationTarget is an HTTPOperation ready to run.
type operationTarget struct {
	op      HTTPOperation
	base    *url.URL
	headers http.Header
}

// SetOperations replaces every action of source (an openapiActions entry)
// with ops, atomically, like SetExternal: an operation whose schema does
// not compile, whose base URL or path is unusable, or whose name is taken is
// skipped, and skipped maps its name to the reason. Safe for concurrent use.
func (r *Registry) SetOperations(source string, ops []HTTPOperation) (skipped map[string]error) {
	var built []action
	for _, op := range ops {
		a, err := r.operationAction(op)
		if err != nil {
			if skipped == nil {
				skipped = map[string]error{}
			}
			skipped[op.Spec.Name] = err
			continue
		}
		built = append(built, a)
	}
	return r.mount(source, built, skipped)
}

// operationAction checks and compiles one operation.
func (r *Registry) operationAction(op HTTPOperation) (action, error) {
	name := op.Spec.Name
	if !actionNamePattern.MatchString(name) {
		return action{}, fmt.Errorf("name %q is not method.action (letters, digits, '_')", name)
	}
	if _, taken := r.actions[name]; taken {
		return action{}, fmt.Errorf("name %q is taken by a configured action", name)
	}
	if msg := checkBaseURL(op.BaseURL); msg != "" {
		return action{}, fmt.Errorf("base URL %s", msg)
	}
	schema, err := compileSchema(name, op.Schema)
	if err != nil {
		return action{}, fmt.Errorf("the parameters schema of %s does not compile: %w", name, err)
	}
	base, _ := url.Parse(op.BaseURL)
	base.Path, base.RawPath = strings.TrimSuffix(base.Path, "/"), ""
	op.Method = strings.ToUpper(op.Method)
	if op.Method == "" {
		op.Method = http.MethodPost
	}
	t := &operationTarget{op: op, base: base, headers: http.Header{}}
	for k, v := range op.Headers {
		t.headers.Set(k, v)
	}
	spec := op.Spec
	spec.Parameters, spec.HTTPMethod, spec.HTTPPath = schema.raw, op.Method, op.Path
	if spec.Effect != workflow.EffectRead {
		spec.Effect = workflow.EffectWrite
	}
	spec.Documents = workflow.DocumentsNone
	t.op.Spec = spec
	return action{
		spec:   spec,
		schema: schema,
		check:  t.check,
		run: func(ctx context.Context, inv invocation) (workflow.ActionResult, error) {
			return r.runOperation(ctx, t, inv)
		},
	}, nil
}

// check refuses path parameters that would leave the path segment they
// fill (placeholderProblems).
func (t *operationTarget) check(params map[string]any) []string {
	return placeholderProblems(t.op.Path, params)
}

// placeholderProblems returns a line for each {name} of the path template
// tmpl whose parameter is missing, empty, "." or "..", or holds a "." or
// ".." segment between slashes or backslashes ("\\..\\admin": some servers
// read a backslash, even percent-encoded, as a slash).
func placeholderProblems(tmpl string, params map[string]any) []string {
	var lines []string
	for _, m := range placeholderPattern.FindAllStringSubmatch(tmpl, -1) {
		v, ok := params[m[1]]
		s := scalarText(v)
		switch {
		case !ok || v == nil:
			lines = append(lines, "/"+m[1]+": is required (it is part of the path)")
		case s == "" || s == "." || s == "..":
			lines = append(lines, fmt.Sprintf("/%s: %q cannot be a path segment", m[1], s))
		case outbound.HasDotSegment(s):
			lines = append(lines, fmt.Sprintf("/%s: %q cannot be a path segment: it holds a \".\" or \"..\" segment between slashes or backslashes", m[1], s))
		}
	}
	return lines
}

// runOperation sends one call and turns the reply into the result.
func (r *Registry) runOperation(ctx context.Context, t *operationTarget, inv invocation) (workflow.ActionResult, error) {
	op := t.op
	name := op.Spec.Name
	req, err := t.request(ctx, inv.call.Parameters)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	for k, v := range t.headers {
		req.Header[k] = v
	}
	if op.Connection != "" {
		c := r.conns[inv.call.UserID][op.Connection]
		if c == nil {
			return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
				"%s needs your connection %s, and you have none of that label: ask an operator to configure it", name, quote(op.Connection))
		}
		for k, v := range c.headers {
			req.Header[k] = v
		}
	}
	req.Header.Set("User-Agent", "twostep")
	req.Header.Set("Accept", "application/json, text/*;q=0.9, */*;q=0.8")
	req.Header.Set("Idempotency-Key", inv.call.IdempotencyKey)
	setFencingToken(req.Header, inv.call.FencingToken)
	rp, err := r.out().Send(ctx, req, t.base, op.Timeout, "action "+quote(name))
	if err != nil {
		return workflow.ActionResult{}, err
	}
	if !rp.OK() {
		return workflow.ActionResult{}, httpFailure(rp, name)
	}
	return r.plainReply(rp, name)
}

// request builds the HTTP request of validated params: the path filled,
// query, header and body parameters placed.
func (t *operationTarget) request(ctx context.Context, params map[string]any) (*http.Request, error) {
	op := t.op
	query := url.Values{}
	header := http.Header{}
	fields := map[string]any{}
	var body any
	hasBody := false
	for _, k := range slices.Sorted(maps.Keys(params)) {
		in, ok := op.Params[k]
		if !ok {
			in = op.Rest
		}
		v := params[k]
		switch in {
		case InQuery:
			addQuery(query, k, v)
		case InHeader:
			// The transport would refuse it as unavailable; it is the
			// parameter's fault, which the next Stage 1 can correct.
			s := scalarText(v)
			if !httpguts.ValidHeaderFieldValue(s) {
				return nil, workflow.Errorf(workflow.KindInvalid,
					"parameter %s of %s is sent as an HTTP header, and a header value cannot hold a line break or another control character",
					quote(k), op.Spec.Name)
			}
			header.Set(k, s)
		case InBody:
			body, hasBody = v, true
		case InBodyField:
			fields[k] = v
		}
	}
	if len(fields) > 0 {
		body, hasBody = fields, true
	}
	u, err := fillPath(t.base, op.Path, params)
	if err != nil {
		return nil, err
	}
	u.RawQuery = query.Encode()
	var rd io.Reader
	if hasBody {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, workflow.WrapKind(workflow.KindInvalid, err, "the body of %s cannot be written as JSON", op.Spec.Name)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, op.Method, u.String(), rd)
	if err != nil {
		return nil, workflow.WrapKind(workflow.KindInternal, err, "cannot build the call to %s", op.Spec.Name)
	}
	req.Header = header
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// fillPath returns base with the path template appended, each {name}
// replaced by the parameter's value percent-escaped as one segment, or a
// KindInvalid error when the result would not be within base.
func fillPath(base *url.URL, tmpl string, params map[string]any) (*url.URL, error) {
	var raw, decoded strings.Builder
	last := 0
	for _, m := range placeholderPattern.FindAllStringSubmatchIndex(tmpl, -1) {
		lit := tmpl[last:m[0]]
		raw.WriteString(lit)
		decoded.WriteString(unescapeLiteral(lit))
		v := scalarText(params[tmpl[m[2]:m[3]]])
		raw.WriteString(url.PathEscape(v))
		decoded.WriteString(v)
		last = m[1]
	}
	raw.WriteString(tmpl[last:])
	decoded.WriteString(unescapeLiteral(tmpl[last:]))
	u := *base
	sep := ""
	if !strings.HasPrefix(tmpl, "/") && tmpl != "" {
		sep = "/"
	}
	u.Path = base.Path + sep + decoded.String()
	u.RawPath = base.EscapedPath() + sep + raw.String()
	u.Fragment, u.RawFragment = "", ""
	if !outbound.WithinBase(base, &u) {
		return nil, workflow.Errorf(workflow.KindInvalid, "the path %s leaves the service's base URL", quote(textclip.Excerpt(u.EscapedPath(), 200)))
	}
	return &u, nil
}

// unescapeLiteral decodes a literal part of a path template, keeping it as
// is when it is not valid percent-encoding.
func unescapeLiteral(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// addQuery adds one query parameter: arrays as repeated values, objects as
// JSON text, scalars as text.
func addQuery(q url.Values, k string, v any) {
	if list, ok := v.([]any); ok {
		for _, item := range list {
			q.Add(k, scalarText(item))
		}
		return
	}
	q.Add(k, scalarText(v))
}

// scalarText writes a parameter value as text: strings as they are,
// numbers without exponent, objects and arrays as JSON, nil as "".
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		raw, _ := json.Marshal(x)
		return string(raw)
	}
}
