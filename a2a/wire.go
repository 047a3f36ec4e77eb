package a2a

import "encoding/json"

// The wire objects of A2A v1.0 in their proto-JSON form (camelCase
// fields, enums as TASK_STATE_* and ROLE_* strings), as @a2a-js/sdk's
// client sends and reads them.

// Task states.
const (
	StateSubmitted     = "TASK_STATE_SUBMITTED"
	StateWorking       = "TASK_STATE_WORKING"
	StateCompleted     = "TASK_STATE_COMPLETED"
	StateFailed        = "TASK_STATE_FAILED"
	StateCanceled      = "TASK_STATE_CANCELED"
	StateInputRequired = "TASK_STATE_INPUT_REQUIRED"
	StateRejected      = "TASK_STATE_REJECTED"
)

// Message roles.
const (
	RoleUser  = "ROLE_USER"
	RoleAgent = "ROLE_AGENT"
)

// Part is one piece of a message or an artifact: text, bytes (raw,
// base64), a URL or structured data, with an optional file name and media
// type.
type Part struct {
	Text      string          `json:"text,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// TaskStatus is where a task stands, with the agent's message about it.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string `json:"artifactId"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Parts       []Part `json:"parts"`
}

// Task is one round of a workflow.
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// StatusUpdate is a streamed change of a task's status.
type StatusUpdate struct {
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
}

// ArtifactUpdate is a streamed artifact of a task.
type ArtifactUpdate struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  Artifact `json:"artifact"`
	LastChunk bool     `json:"lastChunk,omitempty"`
}

// StreamResponse is one event of a stream (and a push notification's
// body): exactly one field is set.
type StreamResponse struct {
	Task           *Task           `json:"task,omitempty"`
	Message        *Message        `json:"message,omitempty"`
	StatusUpdate   *StatusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *ArtifactUpdate `json:"artifactUpdate,omitempty"`
}

// SendMessageRequest is the params of SendMessage and
// SendStreamingMessage.
type SendMessageRequest struct {
	Tenant        string         `json:"tenant,omitempty"`
	Message       *Message       `json:"message"`
	Configuration *SendConfig    `json:"configuration,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// SendConfig is a send's configuration.
type SendConfig struct {
	AcceptedOutputModes        []string    `json:"acceptedOutputModes,omitempty"`
	TaskPushNotificationConfig *PushConfig `json:"taskPushNotificationConfig,omitempty"`
	HistoryLength              *int        `json:"historyLength,omitempty"`
	ReturnImmediately          bool        `json:"returnImmediately,omitempty"`
}

// PushConfig is a task's push notification configuration.
type PushConfig struct {
	Tenant         string              `json:"tenant,omitempty"`
	ID             string              `json:"id,omitempty"`
	TaskID         string              `json:"taskId,omitempty"`
	URL            string              `json:"url"`
	Token          string              `json:"token,omitempty"`
	Authentication *AuthenticationInfo `json:"authentication,omitempty"`
}

// AuthenticationInfo is how a push notification would authenticate
// itself to its receiver (not taken: the token signs it instead).
type AuthenticationInfo struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

// taskRequest is the params of GetTask, CancelTask and SubscribeToTask.
type taskRequest struct {
	Tenant        string         `json:"tenant,omitempty"`
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// listTasksRequest is the params of ListTasks.
type listTasksRequest struct {
	Tenant               string `json:"tenant,omitempty"`
	ContextID            string `json:"contextId,omitempty"`
	Status               string `json:"status,omitempty"`
	PageSize             *int   `json:"pageSize,omitempty"`
	PageToken            string `json:"pageToken,omitempty"`
	HistoryLength        *int   `json:"historyLength,omitempty"`
	StatusTimestampAfter string `json:"statusTimestampAfter,omitempty"`
	IncludeArtifacts     bool   `json:"includeArtifacts,omitempty"`
}

// listTasksResponse is ListTasks' result; nextPageToken is always present.
type listTasksResponse struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	TotalSize     int    `json:"totalSize"`
}

// pushConfigRequest is the params of the push config reads and delete.
type pushConfigRequest struct {
	Tenant    string `json:"tenant,omitempty"`
	TaskID    string `json:"taskId"`
	ID        string `json:"id,omitempty"`
	PageSize  int    `json:"pageSize,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
}

// pushConfigList is ListTaskPushNotificationConfigs' result.
type pushConfigList struct {
	Configs       []PushConfig `json:"configs"`
	NextPageToken string       `json:"nextPageToken"`
}
