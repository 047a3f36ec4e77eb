// Package a2a serves twostep to other agents over A2A v1.0 (DESIGN §11.4,
// docs/a2a.md): the agent card at /.well-known/agent-card.json, the
// JSON-RPC binding at /a2a and the HTTP+JSON binding under /a2a/rest, as
// the official @a2a-js/sdk client speaks them (method names, proto-JSON
// field names, TASK_STATE_* spellings).
//
// It is a protocol over the engine, mounted beside /api (httpapi.Mount):
// a context is a workflow, a task is one round of it. The engine's own
// checks do the work — the request limits of the round routes
// (httpapi.Limits.CheckRequest), the approval decision of the approvals
// route (httpapi.DecisionOf, engine Decide), the Idempotency-Key store
// for a repeated messageId, the webhook outbox (its signing and address
// rules) for push notifications.
//
// Guarantees:
//   - every JSON-RPC answer is a JSON-RPC 2.0 response (an HTTP+JSON
//     error a google.rpc.Status with the A2A reason); errors carry the codes of
//     the specification (task not found -32001, not cancelable -32002,
//     push notifications not supported -32003, unsupported operation
//     -32004, invalid params -32602), with a message a person can act
//     on, never an internal detail;
//   - another user's task or context is "task not found", exactly like an
//     unknown one (the engine's reads are scoped to the caller);
//   - a request body is bounded as on the /api routes (limits.maxBodyBytes,
//     the prompt and documents as the round routes bound them).
package a2a
