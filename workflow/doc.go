// Package workflow is the centre of twostep, its domain: the types
// (workflows, messages, documents, connections, checkpoints, traces,
// approvals), their status enums and error kinds, references and the
// rules of a step's inputs, loop detection, and the contracts the engine
// consumes — Store, Model, Registry, Mode and the Run a mode is handed,
// Dispatcher, Tracer, Budgeter, the approval policy.
//
// Of the project it imports only templates/notices (the texts a round's
// rules write) and textclip; otherwise the standard library, a ULID
// generator and x/text's normalisation (docs/design.md §2). The engine
// that runs rounds lives beside it in package engine; adapters
// (redisstore, memstore, llm, actions, httpapi) convert at their own edge:
// for example redisstore turns redis.Nil into ErrNotFound, and httpapi
// maps error kinds to HTTP status codes in one table.
package workflow
