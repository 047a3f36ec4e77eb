package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// Mount is a protocol a package of its own serves beside /api (the A2A
// server, DESIGN §11.4): its handler runs behind the same middleware as the
// /api routes — tracing, panic recovery, request metrics, the in-flight
// body cap and, on Paths, the bearer-token check — and reads the caller
// with UserFrom.
type Mount struct {
	// Paths are the exact paths Handler serves to a user token, as /api.
	Paths []string
	// Prefixes are served likewise with every path under them
	// (prefix + "/...").
	Prefixes []string
	// Public are the exact paths Handler serves without a token (an agent
	// card); nothing per user may be answered on them.
	Public []string
	// Handler answers every method on those paths (its own 405s).
	Handler http.Handler
	// Close, when set, ends the handler's open streams; CloseStreams
	// calls it (at shutdown).
	Close func()
}

// mountRoutes registers each mount's paths on r.
func (s *Server) mountRoutes(r *gin.Engine) {
	for _, m := range s.mounts {
		h := gin.WrapH(m.Handler)
		for _, p := range append(append([]string(nil), m.Paths...), m.Public...) {
			r.Any(p, h)
		}
		for _, p := range m.Prefixes {
			r.Any(p+"/*rest", h)
		}
	}
}

// needsUser reports whether path takes a user token: /api and a mount's
// Paths and Prefixes.
func (s *Server) needsUser(path string) bool {
	if path == "/api" || strings.HasPrefix(path, "/api/") || s.userPaths[path] {
		return true
	}
	for _, m := range s.mounts {
		for _, p := range m.Prefixes {
			if strings.HasPrefix(path, p+"/") {
				return true
			}
		}
	}
	return false
}

// userPathsOf returns the set of the mounts' Paths.
func userPathsOf(mounts []Mount) map[string]bool {
	out := map[string]bool{}
	for _, m := range mounts {
		for _, p := range m.Paths {
			out[p] = true
		}
	}
	return out
}

// Effective returns l with every zero limit at its default: what a
// Server enforces, for a mounted protocol that bounds its requests alike.
func (l Limits) Effective() (Limits, error) { return l.withDefaults() }

// CheckRequest checks a prompt and its documents as the create and round
// routes do (limits.maxPromptChars, maxDocuments, maxUploadBytes, the
// names and media types), for a mounted protocol that starts rounds: the
// documents decoded, or the error those routes answer (its message says
// what to fix).
func (l Limits) CheckRequest(prompt string, docs []apiv1.DocumentInput) ([]workflow.DocumentContent, error) {
	l, err := l.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := l.checkPrompt(prompt); err != nil {
		return nil, err
	}
	return l.decodeDocuments(docs, nil)
}

// DecisionOf checks an approval decision as POST
// /api/v1/workflows/{id}/approvals/{approvalId} does and returns it for
// the engine's Decide (a mounted protocol answers approvals with it).
func DecisionOf(b apiv1.DecisionBody) (workflow.Decision, error) {
	if b.Decision != "approve" && b.Decision != "reject" {
		return workflow.Decision{}, invalid("body.decision", "decision must be approve or reject", b.Decision)
	}
	d := workflow.Decision{Approve: b.Decision == "approve", Parameters: b.Parameters, Comment: b.Comment}
	if !d.Approve && b.Parameters != nil {
		return d, invalid("body.parameters", "parameters are only taken with decision approve", nil)
	}
	if !d.Approve && (b.Constraints != nil || b.Remember != nil) {
		return d, invalid("body", "constraints and remember are only taken with decision approve", nil)
	}
	if b.Constraints != nil {
		d.Constraints = make(map[string]any, len(b.Constraints))
		for k, v := range b.Constraints {
			d.Constraints[k] = v
		}
	}
	if r := b.Remember; r != nil {
		if r.Scope != "workflow" && r.Scope != "user" {
			return d, invalid("body.remember.scope", "scope must be workflow or user", r.Scope)
		}
		d.Remember = &workflow.Remember{Scope: r.Scope}
		if r.TTL != "" {
			ttl, err := time.ParseDuration(r.TTL)
			if err != nil || ttl <= 0 {
				return d, invalid("body.remember.ttl", "must be a positive duration such as 30m, 8h or 720h", r.TTL)
			}
			d.Remember.TTL = ttl
		}
	}
	return d, nil
}
