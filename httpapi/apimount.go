package httpapi

import (
	"context"
	"time"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// What operations mounted on the API beside this package's
// (Options.APIMounts) share with it, so they refuse, limit and end
// streams exactly as the /api/v1 routes do.

// Fail turns an error from the engine or the store into the caller-safe
// huma error every route answers (the one status table, statusByKind).
func (s *Server) Fail(ctx context.Context, op string, err error) error { return s.fail(ctx, op, err) }

// CheckPrompt refuses a blank prompt or one over limits.maxPromptChars
// (a 422 at body.prompt).
func (s *Server) CheckPrompt(prompt string) error { return s.limits.checkPrompt(prompt) }

// DecodeDocuments checks and decodes documents sent inline (base64) as
// the round routes do (a 422 naming each bad one).
func (s *Server) DecodeDocuments(in []apiv1.DocumentInput) ([]workflow.DocumentContent, error) {
	return s.limits.decodeDocuments(in, nil)
}

// Closing is closed when the server ends its event streams (shutdown).
func (s *Server) Closing() <-chan struct{} { return s.closing }

// WriteTimeout bounds each write of a response to a client that does not
// read (limits' write timeout).
func (s *Server) WriteTimeout() time.Duration { return s.writeWait }

// Heartbeat is how often an idle stream sends a comment.
func (s *Server) Heartbeat() time.Duration { return s.heartbeat }

// Poll is how often a stream reads the store for commits made elsewhere.
func (s *Server) Poll() time.Duration { return s.poll }

// Deltas is the delta source event streams follow (nil: none).
func (s *Server) Deltas() DeltaSource { return s.deltas }

// Changes is the change-notification service of this instance.
func (s *Server) Changes() workflow.Changes { return s.changes }
