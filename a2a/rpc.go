package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/twostep/twostep/httpapi"
)

// request is a JSON-RPC 2.0 request.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is a JSON-RPC 2.0 response: Result or Error.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// MarshalJSON adds the jsonrpc member.
func (r response) MarshalJSON() ([]byte, error) {
	type plain response
	return json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		plain
	}{"2.0", plain(r)})
}

var nullID = json.RawMessage("null")

// call is one request being served: its caller and id.
type call struct {
	ctx  context.Context
	user string
	id   json.RawMessage
	// base is the gateway's URL as the caller reached it (for the
	// download links of documents).
	base string
	// rest is set on the HTTP+JSON binding.
	rest bool
}

// unary methods answer one result; streaming ones write an event stream.
type (
	unaryMethod  func(s *Server, c *call, params json.RawMessage) (any, error)
	streamMethod func(s *Server, c *call, params json.RawMessage, w http.ResponseWriter) error
)

var unaryMethods = map[string]unaryMethod{
	"SendMessage":                      (*Server).sendMessage,
	"GetTask":                          (*Server).getTask,
	"ListTasks":                        (*Server).listTasks,
	"CancelTask":                       (*Server).cancelTask,
	"CreateTaskPushNotificationConfig": (*Server).createPushConfig,
	"GetTaskPushNotificationConfig":    (*Server).getPushConfig,
	"ListTaskPushNotificationConfigs":  (*Server).listPushConfigs,
	"DeleteTaskPushNotificationConfig": (*Server).deletePushConfig,
	"GetExtendedAgentCard": func(*Server, *call, json.RawMessage) (any, error) {
		return nil, newError(codeExtendedCardMissing, "this agent has no extended agent card: the public card is complete")
	},
}

var streamMethods = map[string]streamMethod{
	"SendStreamingMessage": (*Server).sendStreamingMessage,
	"SubscribeToTask":      (*Server).subscribeToTask,
}

// serveRPC reads one JSON-RPC request (bounded by limits.maxBodyBytes)
// and answers it.
func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	body, status, bad := s.readBody(w, r)
	if bad != nil {
		writeRPC(w, status, response{ID: nullID, Error: bad})
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		writeRPC(w, http.StatusOK, response{ID: nullID, Error: newError(codeParseError, "the body is not a JSON-RPC request: "+err.Error())})
		return
	}
	if req.ID == nil || bytes.Equal(req.ID, nullID) {
		req.ID = nullID
	}
	if req.JSONRPC != "2.0" || req.Method == "" || !validID(req.ID) {
		writeRPC(w, http.StatusOK, response{ID: req.ID, Error: newError(codeInvalidRequest,
			`a JSON-RPC 2.0 request needs "jsonrpc":"2.0", a method and a string or number id`)})
		return
	}
	if err := checkVersion(r); err != nil {
		writeRPC(w, http.StatusOK, response{ID: req.ID, Error: err})
		return
	}
	c := &call{ctx: r.Context(), user: httpapi.UserFrom(r.Context()), id: req.ID, base: baseURL(r)}
	if m, ok := streamMethods[req.Method]; ok {
		if err := m(s, c, req.Params, w); err != nil {
			s.writeError(w, c, req.Method, err)
		}
		return
	}
	m, ok := unaryMethods[req.Method]
	if !ok {
		writeRPC(w, http.StatusOK, response{ID: req.ID, Error: newError(codeMethodNotFound, "method "+quote(req.Method)+" is not an A2A v1.0 method")})
		return
	}
	result, err := m(s, c, req.Params)
	if err != nil {
		s.writeError(w, c, req.Method, err)
		return
	}
	writeRPC(w, http.StatusOK, response{ID: req.ID, Result: result})
}

// writeError answers err as its JSON-RPC error, logging an internal one.
func (s *Server) writeError(w http.ResponseWriter, c *call, method string, err error) {
	s.logInternal(c, method, err)
	writeRPC(w, http.StatusOK, response{ID: c.id, Error: asRPC(err)})
}

// readBody reads a request body bounded by limits.maxBodyBytes; on
// failure the HTTP status and the error to answer.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, *rpcError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, newError(codeInvalidRequest,
			"request body is too large: the limit is "+strconv.FormatInt(s.limits.MaxBodyBytes, 10)+" bytes (limits.maxBodyBytes)")
	case err != nil:
		return nil, http.StatusBadRequest, newError(codeInvalidRequest, "the request body could not be read")
	}
	return body, http.StatusOK, nil
}

// checkVersion refuses a request naming another protocol version.
func checkVersion(r *http.Request) *rpcError {
	if v := r.Header.Get("A2A-Version"); v != "" && !speaks(v) {
		return newError(codeVersionNotSupported, "A2A-Version "+quote(v)+" is not supported: this agent speaks "+ProtocolVersion)
	}
	return nil
}

// speaks reports whether an A2A-Version header names the version served
// (major.minor; a patch is ignored, as the specification says).
func speaks(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || v == ProtocolVersion || strings.HasPrefix(v, ProtocolVersion+".")
}

// validID reports whether id is a JSON string or number (or null).
func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return true
	}
	var n json.Number
	return json.Unmarshal(id, &n) == nil
}

// decodeParams decodes params into v; a malformed one is invalid params.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || bytes.Equal(params, nullID) {
		return invalidParams("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("params are invalid: " + err.Error())
	}
	return nil
}

func writeRPC(w http.ResponseWriter, status int, r response) {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{ID: r.ID, Error: newError(codeInternal, "internal error: the answer could not be encoded")})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// baseURL is the gateway's URL as r reached it: its scheme (TLS or
// X-Forwarded-Proto) and Host.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}
