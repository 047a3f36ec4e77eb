package a2a

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/httpapi"
)

// RESTPath is where the HTTP+JSON binding's routes start
// (/a2a/rest/message:send, /a2a/rest/tasks/{id}, ...).
const RESTPath = "/a2a/rest"

// serveREST serves the HTTP+JSON binding: each route is the JSON-RPC
// method of the same name, its params taken from the body, the path and
// the query; errors are google.rpc.Status objects.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	c := &call{ctx: r.Context(), user: httpapi.UserFrom(r.Context()), id: nullID, base: baseURL(r), rest: true}
	if bad := checkVersion(r); bad != nil {
		writeRESTError(w, c, bad)
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var status int
		var bad *rpcError
		if body, status, bad = s.readBody(w, r); bad != nil {
			writeRESTStatus(w, status, bad)
			return
		}
	}
	method, params, bad := restRoute(r.Method, strings.TrimPrefix(r.URL.Path, RESTPath), r.URL.Query(), body)
	if bad != nil {
		writeRESTError(w, c, bad)
		return
	}
	if m, ok := streamMethods[method]; ok {
		if err := m(s, c, params, w); err != nil {
			s.logInternal(c, method, err)
			writeRESTError(w, c, asRPC(err))
		}
		return
	}
	result, err := unaryMethods[method](s, c, params)
	if err != nil {
		s.logInternal(c, method, err)
		writeRESTError(w, c, asRPC(err))
		return
	}
	b, err := json.Marshal(result)
	if err != nil {
		writeRESTError(w, c, newError(codeInternal, "internal error: the answer could not be encoded"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// restRoute maps an HTTP+JSON request to its method and params.
func restRoute(method, path string, q url.Values, body []byte) (string, json.RawMessage, *rpcError) {
	switch {
	case path == "/message:send" && method == http.MethodPost:
		return "SendMessage", body, nil
	case path == "/message:stream" && method == http.MethodPost:
		return "SendStreamingMessage", body, nil
	case path == "/tasks" && method == http.MethodGet:
		return queryParams("ListTasks", q, nil)
	case path == "/extendedAgentCard" && method == http.MethodGet:
		return "GetExtendedAgentCard", json.RawMessage("{}"), nil
	}
	rest, ok := strings.CutPrefix(path, "/tasks/")
	if !ok || rest == "" {
		return "", nil, notARoute(method, path)
	}
	id, sub, hasSub := strings.Cut(rest, "/")
	if hasSub {
		return pushRoute(method, path, id, sub, body)
	}
	id, verb, _ := strings.Cut(id, ":")
	switch {
	case verb == "" && method == http.MethodGet:
		return queryParams("GetTask", q, map[string]any{"id": id})
	case verb == "cancel" && method == http.MethodPost:
		return "CancelTask", mustJSON(map[string]any{"id": id}), nil
	case verb == "subscribe" && (method == http.MethodPost || method == http.MethodGet):
		return "SubscribeToTask", mustJSON(map[string]any{"id": id}), nil
	}
	return "", nil, notARoute(method, path)
}

// pushRoute maps the push notification config routes under a task.
func pushRoute(method, path, task, sub string, body []byte) (string, json.RawMessage, *rpcError) {
	cfg, hasID := strings.CutPrefix(sub, "pushNotificationConfigs/")
	switch {
	case sub == "pushNotificationConfigs" && method == http.MethodGet:
		return "ListTaskPushNotificationConfigs", mustJSON(map[string]any{"taskId": task}), nil
	case sub == "pushNotificationConfigs" && method == http.MethodPost:
		var p map[string]any
		if json.Unmarshal(body, &p) != nil || p == nil { // null decodes to a nil map
			return "", nil, invalidParams("the body must be a TaskPushNotificationConfig object")
		}
		p["taskId"] = task
		return "CreateTaskPushNotificationConfig", mustJSON(p), nil
	case hasID && method == http.MethodGet:
		return "GetTaskPushNotificationConfig", mustJSON(map[string]any{"taskId": task, "id": cfg}), nil
	case hasID && method == http.MethodDelete:
		return "DeleteTaskPushNotificationConfig", mustJSON(map[string]any{"taskId": task, "id": cfg}), nil
	}
	return "", nil, notARoute(method, path)
}

// queryParams builds a method's params from the query (camelCase names;
// numbers and booleans as decimal and lowercase strings).
func queryParams(method string, q url.Values, base map[string]any) (string, json.RawMessage, *rpcError) {
	p := map[string]any{}
	for k, v := range base {
		p[k] = v
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "pageSize", "historyLength":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", nil, invalidParams(k + " must be a whole number")
			}
			p[k] = n
		case "includeArtifacts":
			p[k] = v == "true"
		case "contextId", "status", "pageToken", "statusTimestampAfter", "tenant":
			p[k] = v
		default:
			return "", nil, invalidParams("unknown query parameter " + quote(k))
		}
	}
	return method, mustJSON(p), nil
}

func notARoute(method, path string) *rpcError {
	return newError(codeMethodNotFound, "no A2A route is "+method+" "+RESTPath+path)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// restErrors maps a JSON-RPC code to the HTTP status, the google.rpc
// status and the A2A reason of the HTTP+JSON binding (specification §5.4).
var restErrors = map[int]struct {
	http           int
	status, reason string
}{
	codeParseError:          {http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS"},
	codeInvalidRequest:      {http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS"},
	codeInvalidParams:       {http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS"},
	codeMethodNotFound:      {http.StatusNotFound, "NOT_FOUND", ""},
	codeTaskNotFound:        {http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND"},
	codeTaskNotCancelable:   {http.StatusBadRequest, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"},
	codePushNotSupported:    {http.StatusBadRequest, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	codeUnsupported:         {http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"},
	codeExtendedCardMissing: {http.StatusBadRequest, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	codeVersionNotSupported: {http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"},
}

// writeRESTError answers e as a google.rpc.Status with its ErrorInfo.
func writeRESTError(w http.ResponseWriter, _ *call, e *rpcError) {
	status := http.StatusInternalServerError
	if m, ok := restErrors[e.Code]; ok {
		status = m.http
	}
	writeRESTStatus(w, status, e)
}

func writeRESTStatus(w http.ResponseWriter, status int, e *rpcError) {
	m, ok := restErrors[e.Code]
	if !ok {
		m.status = "INTERNAL"
	}
	body := map[string]any{"code": status, "status": m.status, "message": e.Message}
	if m.reason != "" {
		body["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": m.reason, "domain": "a2a-protocol.org"}}
	}
	b, _ := json.Marshal(map[string]any{"error": body})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// logInternal logs an error answered as internal.
func (s *Server) logInternal(c *call, method string, err error) {
	if asRPC(err).Code == codeInternal {
		zerolog.Ctx(c.ctx).Error().Err(err).Str("method", method).Msg("a2a request failed")
	}
}
