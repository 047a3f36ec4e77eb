package workflow

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
)

// CompleteAction is the reserved action that ends a round with an assistant
// message carrying its "message" parameter.
const CompleteAction = "workflow.complete"

// ForbiddenFields are the names that never appear among business parameters:
// references and context travel outside Stage 2.
var ForbiddenFields = []string{"documentList", "connectionReference", "history", "documents", "connections"}

// IsForbiddenField reports whether name is one of ForbiddenFields in any
// case, as Go's encoding/json matches field names (Unicode simple case
// folding): "Documents" or "documentſ" would reach a downstream decoder as
// "documents", so they are forbidden too. The name is also compared in its
// canonical form (CanonicalFieldName), so look-alike spellings are
// forbidden as well. It is the one rule: Stage 1 fields, Stage 2 keys,
// action plans, edited approvals, step inputs and action schemas all ask it.
func IsForbiddenField(name string) bool {
	return isForbidden(name) || isForbidden(CanonicalFieldName(name))
}

func isForbidden(name string) bool {
	for _, f := range ForbiddenFields {
		if strings.EqualFold(f, name) {
			return true
		}
	}
	return false
}

// Effect says whether an action changes anything outside the workflow.
type Effect string

// Action effects.
const (
	EffectRead  Effect = "read"
	EffectWrite Effect = "write"
)

// DocumentNeed says whether an action takes input documents.
type DocumentNeed string

// Document needs.
const (
	DocumentsNone     DocumentNeed = "none"
	DocumentsOptional DocumentNeed = "optional"
	DocumentsRequired DocumentNeed = "required"
)

// ActionSpec describes a registered action.
type ActionSpec struct {
	// Name is "method.action".
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the business parameters.
	Parameters json.RawMessage `json:"parameters"`
	Effect     Effect          `json:"effect"`
	Documents  DocumentNeed    `json:"documents"`
	// ConnectionKind is the kind of connection the action uses ("" for
	// none); ConnectionRequired says whether it cannot run without one.
	ConnectionKind     string `json:"connectionKind,omitempty"`
	ConnectionRequired bool   `json:"connectionRequired"`
	// Server names the MCP server or the openapiActions entry that serves
	// the action ("" for actions of the gateway itself).
	Server string `json:"server,omitempty"`
	// HTTPMethod and HTTPPath are the REST operation an OpenAPI action
	// calls ("GET", "/tickets/{id}"); empty for every other action.
	HTTPMethod string `json:"httpMethod,omitempty"`
	HTTPPath   string `json:"httpPath,omitempty"`
}

// Connection is the public description of a per-user credentialed endpoint.
// It never carries a secret: credentials stay inside the actions package and
// are attached only when an action runs.
type Connection struct {
	Label       string `json:"label"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
}

// CloneParams returns a deep copy of a parameter map: its maps and []any
// copied all the way down, every other value as it is. An action gets its
// parameters through it (modes.Execute), so that what it does to its map
// reaches neither the run's checkpoint nor the store, which may hold the
// same map (Commit.Handover).
func CloneParams(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m) // the table copied whole, cheaper than inserting
	for k, v := range out {
		switch v.(type) {
		case map[string]any, []any:
			out[k] = cloneValue(v)
		}
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneParams(v)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

// NormalizeParams returns params as the JSON the model would have sent:
// numbers are float64, objects map[string]any, arrays []any, nil an empty
// map. Actions read, and the action schema and approval constraints
// judge, the normalized copy, so type assertions match what was validated.
func NormalizeParams(params map[string]any) (map[string]any, error) {
	if params == nil {
		return map[string]any{}, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ActionCall is one execution of an action.
type ActionCall struct {
	WorkflowID string
	UserID     string
	Round      int
	Step       int
	Action     string
	Parameters map[string]any
	Documents  []DocumentContent
	Connection *Connection
	// IdempotencyKey is "{workflowId}:{round}:{step}".
	IdempotencyKey string
	// FencingToken is the fencing token of the lease the run holds (see
	// Store.ClaimRound), strictly increasing per workflow: a service that
	// remembers the highest token seen per key can refuse a late call from
	// an instance whose lease was taken over. 0 when unknown.
	FencingToken int64
}

// ActionResult is what an action produced. Documents need Name, MimeType
// and Content; the engine assigns ids and the message they belong to.
type ActionResult struct {
	Text      string
	Documents []DocumentContent
	// ModelCalls are the model calls the action made while it ran (ai.process
	// makes one), in the order made, whether they succeeded or not. The
	// engine stores one trace of stage action per call and counts each in
	// the workflow's stats, in the same commit as the step's action message.
	ModelCalls []ActionModelCall
}

// ActionModelCall is one model call made inside an action, with what its
// trace needs. Like every trace it must not carry a secret; the store's
// redaction applies to it as well.
type ActionModelCall struct {
	// Template names what made the call, e.g. "ai.process".
	Template string
	// Prompt is the prompt exactly as sent.
	Prompt []PromptMessage
	// Response is the model's raw answer ("" when the call failed).
	Response string
	// Error says why the call failed, or why its answer was unusable; ""
	// when the answer was used.
	Error            string
	Model            string
	PromptTokens     int
	CompletionTokens int
	// CachedTokens and CacheWriteTokens are the provider's prompt-cache
	// usage (ModelResponse's fields of the same names).
	CachedTokens     int
	CacheWriteTokens int
	LatencyMs        int64
}

// Registry is the engine's view of the actions it may run and the
// connections each user owns.
type Registry interface {
	// Actions returns every registered action, sorted by name.
	Actions() []ActionSpec
	// Action returns one action by name.
	Action(name string) (ActionSpec, bool)
	// ValidateParameters checks params against the action's JSON Schema and
	// returns one "path: message" line per problem (nil when valid).
	ValidateParameters(name string, params map[string]any) []string
	// Execute runs the action. A returned error is an explained step
	// failure, recorded in the action message; it never ends the round by
	// itself. With an error, only the result's ModelCalls count: an action
	// that fails after calling the model still reports those calls, and the
	// engine traces and counts them whether or not err is nil (Text and
	// Documents are ignored on error).
	Execute(ctx context.Context, call ActionCall) (ActionResult, error)
	// Connections returns the connections userID owns, sorted by label.
	Connections(userID string) []Connection
}

// UserScoped is implemented by a Registry some of whose actions belong to
// one user only: ForUser returns the registry as that user sees it.
type UserScoped interface {
	ForUser(userID string) Registry
}
