package a2a

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// ProtocolVersion is the A2A version the server speaks.
const ProtocolVersion = "1.0"

// card is the agent card (A2A v1.0 AgentCard, proto-JSON form).
type card struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []agentInterface          `json:"supportedInterfaces"`
	Provider             *provider                 `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         capabilities              `json:"capabilities"`
	SecuritySchemes      map[string]securityScheme `json:"securitySchemes"`
	SecurityRequirements []securityRequirement     `json:"securityRequirements"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []skill                   `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

type capabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// securityScheme is the proto-JSON oneof: only the HTTP scheme is used.
type securityScheme struct {
	HTTPAuthSecurityScheme *httpAuthScheme `json:"httpAuthSecurityScheme,omitempty"`
}

type httpAuthScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

type securityRequirement struct {
	Schemes map[string]stringList `json:"schemes"`
}

type stringList struct {
	List []string `json:"list"`
}

type skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// The media types a message may carry and a task answers with.
var (
	inputModes  = []string{"text/plain", "application/octet-stream", "application/json"}
	outputModes = []string{"text/plain", "application/octet-stream"}
)

// serveCard answers the agent card: the same for every caller (no token
// is read, nothing per user is shown), its URLs on the host the caller
// reached.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(s.card(baseURL(r)))
	if err != nil {
		http.Error(w, "the agent card could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	// The URLs are built from these: a shared cache keeps a card per them.
	w.Header().Set("Vary", "Host, X-Forwarded-Proto")
	_, _ = w.Write(b)
}

// card builds the card: one skill per action of the catalogue.
func (s *Server) card(base string) card {
	c := card{
		Name: "twostep",
		Description: "A two-stage ReAct workflow gateway: send a request (text, and files as raw parts) and it chooses " +
			"and runs actions until it can answer. A context is a workflow, a task one round of it. A step that needs " +
			"approval puts the task in input-required: answer with a data part {decision: approve|reject, parameters?, constraints?}.",
		SupportedInterfaces: []agentInterface{
			{URL: base + RPCPath, ProtocolBinding: "JSONRPC", ProtocolVersion: ProtocolVersion},
			{URL: base + RESTPath, ProtocolBinding: "HTTP+JSON", ProtocolVersion: ProtocolVersion},
		},
		Version:      orString(s.opts.Version, "dev"),
		Capabilities: capabilities{Streaming: true, PushNotifications: s.opts.CheckPushURL != nil},
		SecuritySchemes: map[string]securityScheme{"bearer": {HTTPAuthSecurityScheme: &httpAuthScheme{
			Scheme: "Bearer", BearerFormat: "JWT or opaque token",
			Description: "A user token of the gateway (API_TOKENS) or a JWT it verifies: the same as /api/v1.",
		}}},
		SecurityRequirements: []securityRequirement{{Schemes: map[string]stringList{"bearer": {List: []string{}}}}},
		DefaultInputModes:    inputModes,
		DefaultOutputModes:   outputModes,
	}
	for _, a := range s.opts.Actions.Actions() {
		c.Skills = append(c.Skills, skillOf(a))
	}
	if c.Skills == nil {
		c.Skills = []skill{}
	}
	return c
}

// skillOf is an action as a skill: its name, description and tags (its
// method, its effect, and the server that serves it).
func skillOf(a workflow.ActionSpec) skill {
	method, _, _ := strings.Cut(a.Name, ".")
	tags := []string{method}
	if a.Effect != "" {
		tags = append(tags, "effect:"+string(a.Effect))
	}
	if a.Server != "" {
		tags = append(tags, "server:"+a.Server)
	}
	desc := a.Description
	if desc == "" {
		desc = a.Name
	}
	return skill{ID: a.Name, Name: a.Name, Description: desc, Tags: tags}
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
