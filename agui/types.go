package agui

import "encoding/json"

// RunAgentInput is the body of a run: AG-UI's RunAgentInput. Fields the
// gateway does not use (state, tools, context) are accepted and ignored.
type RunAgentInput struct {
	_           struct{}        `additionalProperties:"true"`
	ThreadID    string          `json:"threadId" minLength:"1" maxLength:"200" doc:"The client's conversation; the gateway keeps one workflow per (user, threadId)"`
	RunID       string          `json:"runId" minLength:"1" maxLength:"200" doc:"The client's id of this run, echoed in RUN_STARTED and RUN_FINISHED"`
	ParentRunID string          `json:"parentRunId,omitempty" maxLength:"200"`
	State       any             `json:"state,omitempty" doc:"Ignored"`
	Messages    []InputMessage  `json:"messages" maxItems:"10000" doc:"The conversation; only the last user message is read (earlier ones are the workflow's already)"`
	Tools       []any           `json:"tools,omitempty" doc:"Ignored: the gateway's actions are its own"`
	Context     []any           `json:"context,omitempty" doc:"Ignored"`
	Forwarded   json.RawMessage `json:"forwardedProps,omitempty" doc:"forwardedProps.twostep may carry mode, maxSteps, documents and onBusy"`
	Resume      []ResumeEntry   `json:"resume,omitempty" maxItems:"16" doc:"Answers to the interrupts of the run before: decides the pending approval; such a run continues the paused round and starts none"`
}

// InputMessage is one message of the conversation.
type InputMessage struct {
	_    struct{} `additionalProperties:"true"`
	ID   string   `json:"id,omitempty" maxLength:"200"`
	Role string   `json:"role" maxLength:"32" doc:"user, assistant, system, developer, tool, ..."`
	// Content is a string or, for a user message, an array of input
	// parts whose text parts are read.
	Content any `json:"content,omitempty"`
}

// ResumeEntry answers one interrupt.
type ResumeEntry struct {
	_           struct{}        `additionalProperties:"true"`
	InterruptID string          `json:"interruptId" minLength:"1" maxLength:"64" doc:"The interrupt's id: the pending approval's id"`
	Status      string          `json:"status" enum:"resolved,cancelled" doc:"resolved: payload decides; cancelled: reject"`
	Payload     json.RawMessage `json:"payload,omitempty" doc:"With resolved: {decision: approve|reject, parameters?, constraints?, comment?, remember?} as the approvals route takes it"`
}

// Twostep is forwardedProps.twostep.
type Twostep struct {
	Mode      string          `json:"mode,omitempty"`
	MaxSteps  int             `json:"maxSteps,omitempty"`
	Documents json.RawMessage `json:"documents,omitempty"`
	OnBusy    string          `json:"onBusy,omitempty"`
}

// Event is one AG-UI event: Type names it and the fields its kind has
// are set (@ag-ui/core's event schemas).
type Event struct {
	Type            string    `json:"type"`
	Timestamp       int64     `json:"timestamp,omitempty"`
	ThreadID        string    `json:"threadId,omitempty"`
	RunID           string    `json:"runId,omitempty"`
	StepName        string    `json:"stepName,omitempty"`
	MessageID       string    `json:"messageId,omitempty"`
	Role            string    `json:"role,omitempty"`
	Delta           string    `json:"delta,omitempty"`
	ToolCallID      string    `json:"toolCallId,omitempty"`
	ToolCallName    string    `json:"toolCallName,omitempty"`
	ParentMessageID string    `json:"parentMessageId,omitempty"`
	Content         *string   `json:"content,omitempty"`
	Snapshot        *Snapshot `json:"snapshot,omitempty"`
	Result          *Snapshot `json:"result,omitempty"`
	Outcome         *Outcome  `json:"outcome,omitempty"`
	Message         string    `json:"message,omitempty"`
	Code            string    `json:"code,omitempty"`
}

// The event types the gateway sends.
const (
	RunStarted         = "RUN_STARTED"
	RunFinished        = "RUN_FINISHED"
	RunError           = "RUN_ERROR"
	StepStarted        = "STEP_STARTED"
	StepFinished       = "STEP_FINISHED"
	TextMessageStart   = "TEXT_MESSAGE_START"
	TextMessageContent = "TEXT_MESSAGE_CONTENT"
	TextMessageEnd     = "TEXT_MESSAGE_END"
	ToolCallStart      = "TOOL_CALL_START"
	ToolCallArgs       = "TOOL_CALL_ARGS"
	ToolCallEnd        = "TOOL_CALL_END"
	ToolCallResult     = "TOOL_CALL_RESULT"
	StateSnapshot      = "STATE_SNAPSHOT"
)

// Snapshot is the state a STATE_SNAPSHOT carries, and RUN_FINISHED's
// result: where the thread's workflow stands.
type Snapshot struct {
	WorkflowID string `json:"workflowId"`
	Status     string `json:"status"`
	Round      int    `json:"round"`
	Step       int    `json:"step"`
	StopReason string `json:"stopReason,omitempty"`
}

// Outcome is RUN_FINISHED's outcome: success, or interrupt with the
// pending approval.
type Outcome struct {
	Type       string      `json:"type" enum:"success,interrupt"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// Interrupt is a pending approval as AG-UI asks for it.
type Interrupt struct {
	ID             string         `json:"id" doc:"The approval's id; a resume entry names it as interruptId"`
	Reason         string         `json:"reason" enum:"approval,intent" doc:"approval: a call waits with its parameters; intent: Stage 1's choice waits before Stage 2"`
	Message        string         `json:"message"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}
