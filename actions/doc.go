// Package actions is twostep's action registry: the built-in actions
// (ai.process, document.extract, document.generate, http.request and the
// reserved workflow.complete), the HTTP actions declared in the GATEWAY_CONFIG
// YAML file, and the per-user connections those actions may use.
//
// *Registry implements workflow.Registry. It guarantees that:
//   - an action runs only if it is registered and its parameters are valid
//     against its JSON Schema (validated again inside Execute);
//   - a connection is used only by the user who owns it, and only by an action
//     of the connection's kind;
//   - http.request reaches nothing but URLs under the connection's configured
//     base URL (absolute URLs, scheme or host changes and ".." are refused,
//     and so are redirects that leave the base URL);
//   - connection secrets (header values) never leave the package except on the
//     outgoing request: they are absent from workflow.Connection, errors, log
//     lines and action results (a reply that echoes one is scrubbed). Secrets
//     lists them so that other packages can redact traces and logs too;
//   - every execution carries the idempotency key "{workflowId}:{round}:{step}".
package actions
