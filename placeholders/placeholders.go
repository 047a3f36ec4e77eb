// Package placeholders is the placeholder factory: it turns workflow state
// (messages, actions, connections, a Stage 1 selection) into the text of
// each {{KEY:NAME}} placeholder of DESIGN §3–4 (the names are
// templates.Key*; prompts pairs each name with its text).
//
// Every function is pure and deterministic: the same state gives the same
// text, which keeps rendered prompts testable with golden files. The values
// with state only memoize: MethodCache renders exactly what Methods renders,
// without re-parsing each action's schema every time, and a bounded,
// process-wide cache keeps each rendered history entry by message ID (a hit
// only when every field the entry shows is unchanged), so History renders
// each committed message once instead of on every step; another keeps
// each action's Stage 2 cut (StageTwoSchemaFields) by action name and asked
// fields, checked against the action's schema bytes. Nothing
// here reads a global registry; callers pass the actions and connections to
// show (the action-plan mode passes a subset). No secret is ever rendered:
// connections are shown by label, kind and description only.
package placeholders

// DefaultHistoryBudget is the WORKFLOW_HISTORY size budget, in characters,
// used when a caller passes 0: about 500 tokens (at ~4 characters a
// token), so Stage 1 stays within about 1.5 times its first step's size
// over a long round (DESIGN §10.1): the newest entries in full, older ones
// in one line, the rest compacted.
const DefaultHistoryBudget = 2000

// MinHistoryBudget is the smallest WORKFLOW_HISTORY budget: enough for the
// start of the newest entry and the omitted-entries line.
const MinHistoryBudget = 200
