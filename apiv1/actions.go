package apiv1

import "time"

// ActionView describes a registered action (DESIGN §6).
type ActionView struct {
	Name        string         `json:"name" doc:"method.action"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters" doc:"JSON Schema of the business parameters"`
	Effect      string         `json:"effect" enum:"read,write"`
	Connection  string         `json:"connection" doc:"Kind of connection the action uses; empty for none"`
	// ConnectionRequired and Documents add detail beyond DESIGN §6.
	ConnectionRequired bool   `json:"connectionRequired"`
	Documents          string `json:"documents" enum:"none,optional,required"`
	// Server names the MCP server or openapiActions entry serving the action.
	Server string `json:"server,omitempty" doc:"The MCP server (mcp.<server>.<tool>) or the openapiActions entry (<name>.<operationId>) that serves the action; absent for the gateway's own actions"`
	// HTTPMethod and HTTPPath are an OpenAPI operation's method and path.
	HTTPMethod string `json:"httpMethod,omitempty" doc:"The HTTP method of the REST operation an openapiActions action calls"`
	HTTPPath   string `json:"httpPath,omitempty" doc:"The path template of the REST operation an openapiActions action calls, such as /tickets/{id}"`
}

// ActionList is every registered action, sorted by name.
type ActionList struct {
	Actions []ActionView `json:"actions"`
}

// UsageView is GET /api/v1/usage's answer: the caller's budget and what
// the current period used of it.
type UsageView struct {
	Period   string       `json:"period" enum:"day,month" doc:"The budget's period (UTC)"`
	Used     UsageAmounts `json:"used" doc:"What the current period used"`
	Limit    UsageAmounts `json:"limit" doc:"The budget per period"`
	ResetsAt time.Time    `json:"resetsAt" doc:"When the current period ends"`
	Spent    bool         `json:"spent" doc:"The period's budget is spent: new workflows, rounds and resumes answer 429 until resetsAt (a model call was refused for it, or the used tokens or dollars reached it)"`
}

// UsageAmounts are tokens and, when counted, US dollars.
type UsageAmounts struct {
	Tokens *int64   `json:"tokens,omitempty" doc:"Tokens (absent in a limit without one)"`
	USD    *float64 `json:"usd,omitempty" doc:"US dollars, when a price table or a dollar limit is configured"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string            `json:"status" enum:"ok,degraded,unavailable" doc:"degraded: ready, but a configured model does not answer its probe (see checks.model) an MCP server is unreachable (see checks[\"mcp.<name>\"]) or an openapiActions document cannot be fetched (see checks[\"openapi.<name>\"])"`
	Checks map[string]string `json:"checks,omitempty" doc:"Each readiness check: ok or what failed"`
	// Models lists every configured model, provider/model (readyz only).
	Models []string `json:"models,omitempty" doc:"Every configured model (stage models and fallbacks), provider/model"`
}
