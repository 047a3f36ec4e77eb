package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twostep/twostep/outbound"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// httpActionRequest is the JSON body POSTed to an HTTP action's URL.
type httpActionRequest struct {
	Parameters     map[string]any    `json:"parameters"`
	Documents      []httpActionInDoc `json:"documents"`
	Connection     *string           `json:"connection"`
	IdempotencyKey string            `json:"idempotencyKey"`
}

// httpActionInDoc is one input document: metadata and base64 content.
type httpActionInDoc struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Content  []byte `json:"content"`
}

// httpActionReply is the JSON an HTTP action answers with.
type httpActionReply struct {
	Text      *string `json:"text"`
	Documents []struct {
		Name     string `json:"name"`
		MimeType string `json:"mimeType"`
		Content  []byte `json:"content"`
	} `json:"documents"`
}

// httpActionTarget is a configured HTTP action's endpoint and credentials.
type httpActionTarget struct {
	// base is the URL's scheme and host: the only place a call and its
	// redirects may go; path is the URL's path template below it.
	base    *url.URL
	path    string
	method  string
	headers http.Header
	timeout time.Duration
}

// splitActionURL returns a checked action URL's scheme and host, and its
// path template as written ({name} placeholders kept).
func splitActionURL(raw string) (base *url.URL, path string) {
	u, _ := url.Parse(raw)
	base = &url.URL{Scheme: u.Scheme, Host: u.Host}
	path = strings.TrimPrefix(raw, u.Scheme+"://")
	path = path[len(u.Host):]
	return base, path
}

// httpAction builds the action declared by ac (already checked): with body
// "parameters" an HTTPOperation, else the envelope action.
func (r *Registry) httpAction(ac HTTPActionConfig) (action, error) {
	if ac.Body == BodyParameters {
		return r.parametersAction(ac)
	}
	schema, err := compileSchema(ac.Name, ac.Parameters)
	if err != nil {
		return action{}, invalidConfig([]string{fmt.Sprintf("httpActions %s: parameters: %v", ac.Name, err)})
	}
	base, path := splitActionURL(ac.URL)
	method := strings.ToUpper(ac.Method)
	if method == "" {
		method = http.MethodPost
	}
	t := &httpActionTarget{base: base, path: path, method: method, headers: http.Header{}, timeout: ac.Timeout}
	for name, v := range ac.Headers {
		t.headers.Set(name, v)
	}
	spec := workflow.ActionSpec{
		Name: ac.Name, Description: ac.Description, Parameters: schema.raw,
		Effect: ac.Effect, Documents: ac.Documents,
		ConnectionKind: ac.ConnectionKind, ConnectionRequired: ac.ConnectionRequired,
	}
	if spec.Effect == "" {
		spec.Effect = workflow.EffectWrite
	}
	if spec.Documents == "" {
		spec.Documents = workflow.DocumentsOptional
	}
	run := func(ctx context.Context, inv invocation) (workflow.ActionResult, error) {
		return r.runHTTPAction(ctx, spec, t, inv)
	}
	var check func(map[string]any) []string
	if placeholderPattern.MatchString(path) {
		check = func(params map[string]any) []string { return placeholderProblems(path, params) }
	}
	return action{spec: spec, schema: schema, check: check, run: run}, nil
}

// runHTTPAction POSTs the call to the action's URL and turns the JSON reply
// into the result. Non-2xx and malformed replies are explained failures.
func (r *Registry) runHTTPAction(ctx context.Context, spec workflow.ActionSpec, t *httpActionTarget, inv invocation) (workflow.ActionResult, error) {
	body := httpActionRequest{
		Parameters:     inv.call.Parameters,
		Documents:      []httpActionInDoc{},
		IdempotencyKey: inv.call.IdempotencyKey,
	}
	if body.Parameters == nil {
		body.Parameters = map[string]any{}
	}
	if spec.Documents != workflow.DocumentsNone {
		for _, d := range inv.call.Documents {
			body.Documents = append(body.Documents, httpActionInDoc{
				ID: d.ID, Name: d.Name, MimeType: d.MimeType, Size: int64(len(d.Content)), Content: d.Content,
			})
		}
	}
	if inv.conn != nil {
		body.Connection = &inv.conn.public.Label
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInvalid, err, "cannot encode the call to %s", spec.Name)
	}
	target, err := fillPath(t.base, t.path, inv.call.Parameters)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, t.method, target.String(), bytes.NewReader(raw))
	if err != nil {
		return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInternal, err, "cannot build the call to %s", spec.Name)
	}
	for name, values := range t.headers {
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "twostep")
	req.Header.Set("Idempotency-Key", inv.call.IdempotencyKey)
	setFencingToken(req.Header, inv.call.FencingToken)
	what := "the service of action " + quote(spec.Name)
	rp, err := r.out().Send(ctx, req, t.base, t.timeout, what)
	if err != nil {
		return workflow.ActionResult{}, err
	}
	if !rp.OK() {
		return workflow.ActionResult{}, outbound.StatusError(rp, what, replyDetail(rp.Body))
	}
	if !envelopeShaped(rp.Body) {
		return r.plainReply(rp, spec.Name)
	}
	return r.decodeActionReply(rp.Body, what)
}

// parametersAction builds a declared HTTP action with body "parameters":
// an HTTPOperation whose URL placeholders are path parameters and whose
// other parameters are the JSON body's fields (GET, HEAD, DELETE: the
// query).
func (r *Registry) parametersAction(ac HTTPActionConfig) (action, error) {
	base, path := splitActionURL(ac.URL)
	method := strings.ToUpper(ac.Method)
	if method == "" {
		method = http.MethodPost
	}
	op := HTTPOperation{
		Spec: workflow.ActionSpec{
			Name: ac.Name, Description: ac.Description, Effect: ac.Effect,
		},
		Schema: ac.Parameters, Method: method, BaseURL: base.String(), Path: path,
		Params: map[string]ParamIn{}, Rest: InBodyField, Headers: ac.Headers, Timeout: ac.Timeout,
	}
	if op.Spec.Effect == "" {
		op.Spec.Effect = workflow.EffectWrite
	}
	if len(op.Schema) == 0 {
		op.Schema = map[string]any{"type": "object", "additionalProperties": false}
	}
	if method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete {
		op.Rest = InQuery
	}
	u, _ := url.Parse(ac.URL)
	for _, m := range placeholderPattern.FindAllStringSubmatch(u.Path, -1) {
		op.Params[m[1]] = InPath
	}
	a, err := r.operationAction(op)
	if err != nil {
		return action{}, invalidConfig([]string{fmt.Sprintf("httpActions %s: %v", ac.Name, err)})
	}
	// A declared action's spec says how it is called like before.
	a.spec.HTTPMethod, a.spec.HTTPPath = "", ""
	return a, nil
}

// envelopeShaped reports whether a reply is the {text, documents} shape:
// a JSON object with at least one of them, text a string, documents an
// array, and no other member.
func envelopeShaped(b []byte) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil || len(fields) == 0 {
		return false
	}
	for k, v := range fields {
		switch k {
		case "text":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return false
			}
		case "documents":
			var list []json.RawMessage
			if json.Unmarshal(v, &list) != nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// decodeActionReply checks and converts an HTTP action's {text, documents}.
func (r *Registry) decodeActionReply(b []byte, what string) (workflow.ActionResult, error) {
	malformed := func(why string) error {
		return workflow.Errorf(workflow.KindUnavailable,
			"%s sent a malformed reply (%s); it must be JSON {\"text\": string, \"documents\": [{\"name\", \"mimeType\", \"content\" (base64)}]}", what, why)
	}
	var rep httpActionReply
	if err := json.Unmarshal(b, &rep); err != nil {
		return workflow.ActionResult{}, malformed(jsonProblem(err))
	}
	if rep.Text == nil && len(rep.Documents) == 0 {
		return workflow.ActionResult{}, malformed("neither text nor documents")
	}
	var res workflow.ActionResult
	if rep.Text != nil {
		res.Text = *rep.Text
	}
	taken := map[string]bool{}
	for i, d := range rep.Documents {
		name := safeFileName(d.Name)
		if name == "" {
			return workflow.ActionResult{}, malformed(fmt.Sprintf("documents[%d] has no usable name", i))
		}
		if int64(len(d.Content)) > r.limits.MaxDocumentBytes {
			return workflow.ActionResult{}, malformed(fmt.Sprintf("documents[%d] is larger than %d bytes", i, r.limits.MaxDocumentBytes))
		}
		mimeType := cleanMimeType(d.MimeType)
		if mimeType == "" {
			mimeType = mimeFromName(name)
		}
		name = uniqueName(taken, name)
		res.Documents = append(res.Documents, workflow.DocumentContent{
			Document: workflow.Document{Name: name, MimeType: mimeType, Size: int64(len(d.Content))},
			Content:  d.Content,
		})
	}
	if res.Text == "" {
		res.Text = fmt.Sprintf("%s produced %s.", what, workflow.Count(len(res.Documents), "document", ""))
	}
	return res, nil
}

// replyDetail returns the explanation of a failed reply: the error, message,
// detail or title field of a JSON body, else an excerpt of the body.
func replyDetail(b []byte) string {
	var fields map[string]any
	if json.Unmarshal(b, &fields) == nil {
		for _, k := range []string{"error", "message", "detail", "title"} {
			if s, ok := fields[k].(string); ok && s != "" {
				return textclip.Excerpt(s, 300)
			}
		}
	}
	return bodyExcerpt(b, 300)
}

// jsonProblem describes a JSON decoding error without quoting the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON: %v at byte %d", se, se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %s is %s, not %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// setFencingToken sends the run's fencing token as X-Fencing-Token beside
// the Idempotency-Key, when the run holds a fenced lease.
func setFencingToken(h http.Header, token int64) {
	if token > 0 {
		h.Set("X-Fencing-Token", strconv.FormatInt(token, 10))
	}
}
