package openapi

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

var (
	// nonWord runs are replaced by "_" in action names.
	nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)
	// placeholder finds {name} in a path template.
	placeholder = regexp.MustCompile(`\{([^{}/]+)\}`)
	// ignoredHeaders are header parameters OpenAPI says to ignore: the
	// gateway sets them itself.
	ignoredHeaders = []string{"accept", "content-type", "authorization"}
)

// built is what one document offers: the operations to mount and one
// warning per operation skipped.
type built struct {
	ops      []actions.HTTPOperation
	warnings []string
}

// operations turns every operation of doc into an HTTPOperation of src;
// base is the URL calls go to. Operations outside src.Include are left
// out; those that cannot be expressed are warnings. problems lists what is
// wrong with the configuration against the document (an include or effects
// entry naming no operation).
func operations(src SourceConfig, doc *openapi3.T, base string) (b built, problems []string) {
	found := map[string]bool{}
	names := map[string]string{} // action name → the operation that took it
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for _, method := range sortedMethods(item) {
			op := item.GetOperation(method)
			what := method + " " + path
			if op.OperationID != "" {
				what = fmt.Sprintf("%s (%s)", op.OperationID, what)
				found[op.OperationID] = true
			}
			short := actionPart(op.OperationID, method, path)
			found[short] = true
			if len(src.Include) > 0 && !slices.Contains(src.Include, op.OperationID) && !slices.Contains(src.Include, short) {
				continue
			}
			name := src.Name + "." + short
			if prev, dup := names[name]; dup {
				b.warnings = append(b.warnings, fmt.Sprintf("%s: operation %s skipped: its action name %s is taken by %s", src.Name, what, name, prev))
				continue
			}
			hop, err := operation(src, item, op, method, path, base)
			if err != nil {
				b.warnings = append(b.warnings, fmt.Sprintf("%s: operation %s skipped: %v", src.Name, what, err))
				continue
			}
			hop.Spec.Name = name
			names[name] = what
			if e, ok := src.Effects[op.OperationID]; ok && op.OperationID != "" {
				hop.Spec.Effect = e
			} else if e, ok := src.Effects[short]; ok {
				hop.Spec.Effect = e
			}
			b.ops = append(b.ops, hop)
		}
	}
	for _, id := range src.Include {
		if !found[id] {
			problems = append(problems, fmt.Sprintf("openapiActions %s: include names %q, which is no operation of the document", src.Name, id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(src.Effects)) {
		if !found[id] {
			problems = append(problems, fmt.Sprintf("openapiActions %s: effects names %q, which is no operation of the document", src.Name, id))
		}
	}
	return b, problems
}

// operation builds one operation's HTTPOperation (its Spec.Name is set by
// the caller), or says why it cannot be expressed.
func operation(src SourceConfig, item *openapi3.PathItem, op *openapi3.Operation, method, path, base string) (actions.HTTPOperation, error) {
	props := map[string]any{}
	var required []any
	params := map[string]actions.ParamIn{}
	for _, p := range mergedParameters(item, op) {
		if p.In == openapi3.ParameterInHeader && slices.Contains(ignoredHeaders, strings.ToLower(p.Name)) {
			continue
		}
		in, err := paramIn(p)
		if err != nil {
			if !p.Required {
				continue
			}
			return actions.HTTPOperation{}, err
		}
		if _, taken := params[p.Name]; taken || p.Name == "body" {
			return actions.HTTPOperation{}, fmt.Errorf("two parameters are named %q", p.Name)
		}
		if workflow.IsForbiddenField(p.Name) {
			return actions.HTTPOperation{}, fmt.Errorf("parameter %q has a name reserved by the gateway", p.Name)
		}
		if p.Schema == nil {
			return actions.HTTPOperation{}, fmt.Errorf("parameter %q has no schema (content-typed parameters are not supported)", p.Name)
		}
		s, err := jsonSchema(p.Schema)
		if err != nil {
			return actions.HTTPOperation{}, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		if m, ok := s.(map[string]any); ok && p.Description != "" && m["description"] == nil {
			m["description"] = p.Description
		}
		props[p.Name] = s
		params[p.Name] = in
		if p.Required || in == actions.InPath {
			required = append(required, p.Name)
		}
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		mt, media := jsonMedia(rb.Value.Content)
		if media == nil {
			return actions.HTTPOperation{}, fmt.Errorf("its request body is %s, not JSON", strings.Join(slices.Sorted(maps.Keys(rb.Value.Content)), ", "))
		}
		var s any = map[string]any{}
		if media.Schema != nil {
			var err error
			if s, err = jsonSchema(media.Schema); err != nil {
				return actions.HTTPOperation{}, fmt.Errorf("request body (%s): %w", mt, err)
			}
		}
		if m, ok := s.(map[string]any); ok && rb.Value.Description != "" && m["description"] == nil {
			m["description"] = rb.Value.Description
		}
		props["body"] = s
		params["body"] = actions.InBody
		if rb.Value.Required {
			required = append(required, "body")
		}
	}
	for _, m := range placeholder.FindAllStringSubmatch(path, -1) {
		if params[m[1]] != actions.InPath {
			return actions.HTTPOperation{}, fmt.Errorf("its path names {%s}, which no path parameter declares", m[1])
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	effect := workflow.EffectWrite
	if method == http.MethodGet || method == http.MethodHead {
		effect = workflow.EffectRead
	}
	return actions.HTTPOperation{
		Spec: workflow.ActionSpec{
			Description: describe(op, method, path), Effect: effect, Server: src.Name,
		},
		Schema: schema, Method: method, BaseURL: base, Path: path, Params: params,
		Headers: src.Headers, Connection: src.Connection, Timeout: src.Timeout,
	}, nil
}

// mergedParameters returns the path item's parameters overridden by the
// operation's (same name and location), in order.
func mergedParameters(item *openapi3.PathItem, op *openapi3.Operation) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	add := func(list openapi3.Parameters) {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			i := slices.IndexFunc(out, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In })
			if i >= 0 {
				out[i] = p
			} else {
				out = append(out, p)
			}
		}
	}
	add(item.Parameters)
	add(op.Parameters)
	return out
}

// paramIn maps a parameter's location, refusing cookies.
func paramIn(p *openapi3.Parameter) (actions.ParamIn, error) {
	switch p.In {
	case openapi3.ParameterInPath:
		return actions.InPath, nil
	case openapi3.ParameterInQuery:
		return actions.InQuery, nil
	case openapi3.ParameterInHeader:
		return actions.InHeader, nil
	}
	return "", fmt.Errorf("parameter %q is in %s, which the gateway does not send", p.Name, p.In)
}

// jsonMedia returns the JSON media type of a request body's content
// (application/json, or any +json type), or nil.
func jsonMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	for _, mt := range slices.Sorted(maps.Keys(content)) {
		base, _, _ := strings.Cut(strings.ToLower(mt), ";")
		base = strings.TrimSpace(base)
		if base == "application/json" || strings.HasSuffix(base, "+json") {
			return mt, content[mt]
		}
	}
	return "", nil
}

// describe is an action's description: summary, then description, else
// the method and path.
func describe(op *openapi3.Operation, method, path string) string {
	parts := []string{}
	for _, s := range []string{op.Summary, op.Description} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return method + " " + path
	}
	return textclip.ClipRunes(strings.Join(parts, "\n\n"), 2000)
}

// actionPart is the part of the action name after the dot: the
// operationId made a valid name (other characters become "_", a leading
// capital lower-case), or <method>_<path words> without one.
func actionPart(id, method, path string) string {
	if id == "" {
		id = strings.ToLower(method) + "_" + strings.Trim(nonWord.ReplaceAllString(path, "_"), "_")
	}
	id = strings.Trim(nonWord.ReplaceAllString(id, "_"), "_")
	if id == "" {
		return "op"
	}
	switch c := id[0]; {
	case c >= 'A' && c <= 'Z':
		id = strings.ToLower(id[:1]) + id[1:]
	case c < 'a' || c > 'z':
		id = "op_" + id
	}
	return strings.TrimRight(id, "_")
}

// sortedMethods returns the methods of a path item's operations in a
// fixed order.
func sortedMethods(item *openapi3.PathItem) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace} {
		if item.GetOperation(m) != nil {
			out = append(out, m)
		}
	}
	return out
}

// baseURL returns where calls of src go: its baseURL, else the document's
// first server (variables at their defaults, a relative URL resolved
// against the document's own URL).
func baseURL(src SourceConfig, doc *openapi3.T) (string, error) {
	if src.BaseURL != "" {
		return strings.TrimSuffix(src.BaseURL, "/"), nil
	}
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return "", fmt.Errorf("the document lists no server: set baseURL")
	}
	srv := doc.Servers[0]
	raw := srv.URL
	for name, v := range srv.Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("its first server %q is not a URL: set baseURL", srv.URL)
	}
	if !u.IsAbs() {
		if !src.isURL() {
			return "", fmt.Errorf("its first server %q is relative and the document is a file: set baseURL", srv.URL)
		}
		specURL, _ := url.Parse(src.Spec)
		u = specURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("its first server %q is not http(s): set baseURL", srv.URL)
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}
