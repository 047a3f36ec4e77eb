// Package engine runs workflows: the rounds of steps a Mode drives, the
// local runner that schedules them on workers under leases with fencing
// tokens, the dispatch of rounds across instances, the retries of store
// writes, the tracing decorators, approval orchestration (pauses,
// decisions, expiry, standing approvals), forks and the busy/queue rules
// of a workflow that receives a round while one runs.
//
// It consumes the contracts of package workflow (Store, Model, Registry,
// Mode, Dispatcher, Tracer, Budgeter, ApprovalPolicy ...) and imports, of
// the project, only workflow, templates/notices and textclip. A Mode sees
// the engine through the workflow.Run interface, so the modes need not
// import this package.
package engine
