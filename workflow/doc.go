// Package workflow is the centre of twostep: the domain types (workflows,
// messages, documents, connections, traces), their status enums and error
// kinds, the interfaces the engine consumes (Store, Model, Registry, Mode),
// and the engine and local runner that drive rounds of steps.
//
// It imports only the standard library and small pure libraries. Adapters
// (redisstore, memstore, llm, actions, httpapi) convert at their own edge:
// for example redisstore turns redis.Nil into ErrNotFound, and httpapi maps
// error kinds to HTTP status codes in one table.
package workflow
