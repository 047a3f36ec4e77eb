package a2a

import (
	"errors"

	"github.com/twostep/twostep/workflow"
)

// The JSON-RPC error codes: JSON-RPC 2.0's own and A2A v1.0's.
const (
	codeParseError          = -32700
	codeInvalidRequest      = -32600
	codeMethodNotFound      = -32601
	codeInvalidParams       = -32602
	codeInternal            = -32603
	codeTaskNotFound        = -32001
	codeTaskNotCancelable   = -32002
	codePushNotSupported    = -32003
	codeUnsupported         = -32004
	codeExtendedCardMissing = -32007
	codeVersionNotSupported = -32009
)

// rpcError is a JSON-RPC error object, and an error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func newError(code int, msg string) *rpcError { return &rpcError{Code: code, Message: msg} }

func invalidParams(msg string) *rpcError { return newError(codeInvalidParams, msg) }

func taskNotFound(id string) *rpcError {
	return newError(codeTaskNotFound, "task "+quote(id)+" not found")
}

func unsupported(msg string) *rpcError { return newError(codeUnsupported, msg) }

// asRPC maps an engine error to its JSON-RPC error: the workflow error
// kinds in one table. An error of no kind is internal: its detail is
// logged by the caller, never answered.
func asRPC(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	// The checks shared with the /api routes (httpapi.Limits.CheckRequest,
	// httpapi.DecisionOf) answer 4xx problems: bad params here.
	var se interface{ GetStatus() int }
	if errors.As(err, &se) && se.GetStatus() >= 400 && se.GetStatus() < 500 {
		return invalidParams(err.Error())
	}
	msg := workflow.PublicMessage(err)
	switch workflow.KindOf(err) {
	case workflow.KindNotFound:
		return newError(codeTaskNotFound, msg)
	case workflow.KindInvalid:
		return invalidParams(msg)
	case workflow.KindConflict:
		return unsupported(msg)
	case workflow.KindTooMany, workflow.KindUnavailable:
		return newError(codeInternal, msg+"; retry later")
	case workflow.KindForbidden, workflow.KindUnauthorized:
		return newError(codeInvalidRequest, msg)
	}
	return newError(codeInternal, "internal error; the gateway's log has the details")
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "\"" + s + "\""
}
