// Package modes holds what the round modes (modes/react, and the
// action-plan mode) share: the execute-and-commit path of a step (server-side
// resolution of document references and the connection, the registry call
// with its idempotency key, the action message), the record of a failed
// step and the max-steps closing message.
//
// The engine (engine.Engine) owns the loop, persistence and the
// round-ending rules; a mode decides phases and hands each finished step to
// workflow.Run.CommitStep through the helpers here, so both modes record
// steps identically.
package modes
