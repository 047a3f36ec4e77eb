// Package httpapi serves twostep over HTTP: the /api/v1 routes of DESIGN §6,
// bearer-token auth, RFC 9457 problem+json errors, Server-Sent Events, the
// health, readiness and Prometheus endpoints and the OpenAPI 3.1 document.
//
// gin is the router and huma v2 (through humagin) derives request validation
// and the OpenAPI document from the Go types; both stay behind
// Server.Routes, which returns a plain http.Handler.
//
// Guarantees:
//   - every error leaves as application/problem+json with a message a person
//     can act on; workflow error kinds map to HTTP statuses in one table
//     (problem.go), internal details are logged, never answered;
//   - every /api route is scoped to the token's user: another user's
//     workflow, message or document answers 404, exactly like a missing one
//     (the engine's reads, engine.Reader, check it in one place; the
//     admin routes read through its explicit admin scope, never a Store);
//   - malformed input is rejected before the engine or the store is called,
//     so a rejected request writes nothing.
package httpapi
