package adminv1

import "time"

// DeliveryView is one webhook delivery and its attempts.
type DeliveryView struct {
	ID          string        `json:"id" doc:"The webhook-id of every attempt"`
	WorkflowID  string        `json:"workflowId"`
	Event       string        `json:"event" enum:"round.completed,round.failed,round.stopped,round.awaiting_approval"`
	URL         string        `json:"url"`
	Status      string        `json:"status" enum:"pending,delivered,failed"`
	CreatedAt   time.Time     `json:"createdAt"`
	NextAttempt *time.Time    `json:"nextAttempt,omitempty" doc:"When the next attempt is due (pending deliveries)"`
	Attempts    []AttemptView `json:"attempts"`
}

// AttemptView is one attempt of a delivery.
type AttemptView struct {
	At           time.Time `json:"at"`
	ResponseCode int       `json:"responseCode,omitempty" doc:"The receiver's HTTP status; absent when none came"`
	Error        string    `json:"error,omitempty"`
}

// DeliveryList lists a workflow's deliveries, oldest first.
type DeliveryList struct {
	Deliveries []DeliveryView `json:"deliveries"`
}
