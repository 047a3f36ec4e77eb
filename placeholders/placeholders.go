// Package placeholders is the placeholder factory: it turns workflow state
// (messages, actions, connections, a Stage 1 selection) into the text of
// each {{KEY:NAME}} placeholder of DESIGN §3–4 (the names are
// templates.Key*; prompts pairs each name with its text).
//
// Every function is pure and deterministic: the same state gives the same
// text, which keeps rendered prompts testable with golden files. The one
// value with state, Cache, only memoizes, and is owned by whoever renders
// (a prompt builder): its methods return exactly what the functions of the
// same name return, without re-parsing each action's schema, re-rendering
// each committed history entry or re-cutting each Stage 2 schema on every
// step (every part bounded, see Cache). Nothing
// here reads a global registry; callers pass the actions and connections to
// show (the action-plan mode passes a subset). No secret is ever rendered:
// connections are shown by label, kind and description only.
package placeholders

// DefaultHistoryBudget bounds the sealed history section (DESIGN §11.1),
// in characters, used when a caller passes 0: about 3,000 tokens, forty
// or so one-line entries with their summaries and the compaction summary;
// past it, compaction folds the oldest sealed entries into the summary.
const DefaultHistoryBudget = 12000

// MinHistoryBudget is the smallest WORKFLOW_HISTORY budget: enough for the
// start of the newest entry and the omitted-entries line.
const MinHistoryBudget = 200
