package workflow

import (
	"errors"
	"fmt"
)

// Kind classifies an error for callers that must decide what to do with it:
// the HTTP layer maps each kind to a status code, the engine tells "try later"
// (Unavailable) from "bad request" (Invalid).
type Kind string

// The error kinds. Every error that leaves a package of twostep either is an
// *Error of one of these kinds or is treated as KindInternal.
const (
	KindNotFound     Kind = "not_found"
	KindInvalid      Kind = "invalid"
	KindConflict     Kind = "conflict"
	KindUnauthorized Kind = "unauthorized"
	KindForbidden    Kind = "forbidden"
	KindUnavailable  Kind = "unavailable"
	KindTooMany      Kind = "too_many"
	KindInternal     Kind = "internal"
)

// Error is the one error type of the domain. Message is written for a person
// and is safe to show to the caller (it never carries a secret); Err is the
// underlying cause, kept for logs.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

// Sentinels for errors.Is: errors.Is(err, ErrNotFound) is true for every
// *Error of kind KindNotFound, whatever its message.
var (
	ErrNotFound    = &Error{Kind: KindNotFound}
	ErrInvalid     = &Error{Kind: KindInvalid}
	ErrConflict    = &Error{Kind: KindConflict}
	ErrUnavailable = &Error{Kind: KindUnavailable}
)

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = string(e.Kind)
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a sentinel (an *Error without a message) of
// the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Kind == e.Kind
}

// Errorf returns an *Error of the given kind with a formatted, caller-safe
// message.
func Errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// WrapKind returns an *Error of the given kind whose cause is err.
func WrapKind(kind Kind, err error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns the kind of the first *Error in err's chain, KindInternal
// when there is none, and "" for a nil error.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// PublicMessage returns the caller-safe message of the first *Error in err's
// chain, or a generic text for internal errors.
func PublicMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != KindInternal {
		if e.Message != "" {
			return e.Message
		}
		return string(e.Kind)
	}
	return "internal error"
}

// Wrap prefixes *errp with the operation that failed, keeping its kind:
//
//	defer workflow.Wrap(&err, "Commit(%q)", id)
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

// NoWorkflow is the one answer for a workflow the caller may not see: a
// missing id, a malformed one and another user's all read exactly alike,
// so no answer tells them apart (no existence oracle).
func NoWorkflow(id string) error {
	return Errorf(KindNotFound, "workflow %q not found", id)
}
