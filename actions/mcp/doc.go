// Package mcp mounts the tools of Model Context Protocol servers as twostep
// actions (DESIGN §9.4), over the official Go SDK.
//
// Each server of the YAML mcpServers section — a command spoken to over
// stdio, or a streamable-HTTP URL — is kept connected by one supervisor
// goroutine owned by a Manager. It guarantees that:
//   - every tool the server lists becomes the action mcp.<server>.<tool>,
//     with the tool's description and inputSchema compiled by the actions
//     registry's validator (a tool whose schema does not compile is logged
//     and skipped); readOnlyHint true makes it a read, anything else a
//     write, so approvals apply;
//   - the list follows notifications/tools/list_changed and every reconnect;
//   - a call sends tools/call with the validated parameters under a per-call
//     timeout; cancelling the step's context (stop, shutdown) makes the SDK
//     send notifications/cancelled;
//   - results become the message text (text content) and documents
//     (structured content as JSON, images, audio and embedded resources with
//     their MIME types), within the actions size caps; isError true is a
//     failed step whose error names what the tool said;
//   - a server that dies or cannot be reached never takes the gateway down:
//     stdio servers are restarted with backoff, its tools fail as steps with
//     a clear reason, and Status reports it for /readyz;
//   - stdio servers get only a minimal environment plus their configured
//     env, never the gateway's own secrets; resolved ${NAME} values are
//     listed by Config.Secrets for the redactor.
package mcp
