package a2a

import (
	"encoding/json"
	"strconv"

	"github.com/twostep/twostep/workflow"
)

// Push notifications go through the webhook outbox (DESIGN §10.3): the
// config sent with the message that starts a context becomes the
// workflow's webhook subscription, in format WebhookFormatA2A. Every round
// that ends or pauses then enqueues, in its own commit, a delivery whose
// body is an A2A StreamResponse (a statusUpdate), signed as every webhook
// is (Standard Webhooks, HMAC-SHA256) with the config's token as the
// secret, retried until a 2xx; its URL obeys the webhook address rules.

// minPushToken is the shortest token taken: it is the signing key.
const minPushToken = 16

// pushConfigID is the id of a context's one push config.
const pushConfigID = "default"

// subscription checks a push config and returns its subscription; nil
// for none.
func (s *Server) subscription(p *PushConfig) (*workflow.WebhookSubscription, error) {
	if p == nil {
		return nil, nil
	}
	if s.opts.CheckPushURL == nil {
		return nil, newError(codePushNotSupported, "push notifications are not enabled on this gateway")
	}
	if err := s.opts.CheckPushURL(p.URL); err != nil {
		return nil, invalidParams("taskPushNotificationConfig.url: " + err.Error())
	}
	if p.Authentication != nil {
		return nil, invalidParams("taskPushNotificationConfig.authentication is not taken: each notification is signed " +
			"with the token instead (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)")
	}
	if len(p.Token) < minPushToken || len(p.Token) > 255 || !printable(p.Token) {
		return nil, invalidParams("taskPushNotificationConfig.token must be " + strconv.Itoa(minPushToken) +
			" to 255 printable characters: it is the secret each notification is signed with")
	}
	return &workflow.WebhookSubscription{URL: p.URL, Secret: p.Token, Format: workflow.WebhookFormatA2A}, nil
}

// PushBody renders the body of an A2A push notification for event (a
// round that ended or paused) of wf, as the commit stores it: a
// StreamResponse carrying the task's status update. The receiver reads
// the task (artifacts included) with GetTask.
func PushBody(_ string, wf *workflow.Workflow) ([]byte, error) {
	state, msg := roundState(wf, wf.Round, nil)
	return json.Marshal(StreamResponse{StatusUpdate: &StatusUpdate{TaskID: taskID(wf.ID, wf.Round), ContextID: wf.ID,
		Status: TaskStatus{State: state, Message: msg, Timestamp: stamp(wf, wf.Round, nil)}}})
}

// createPushConfig is refused for an existing task: a context's push
// config is fixed when it starts.
func (s *Server) createPushConfig(c *call, params json.RawMessage) (any, error) {
	var in PushConfig
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	if s.opts.CheckPushURL == nil {
		return nil, newError(codePushNotSupported, "push notifications are not enabled on this gateway")
	}
	if _, _, _, err := s.loadTask(c, in.TaskID); err != nil {
		return nil, err
	}
	return nil, unsupported("a push notification config is taken with the message that starts a context " +
		"(configuration.taskPushNotificationConfig) and covers all its tasks; it cannot be added later")
}

// pushConfigs returns the push config of the task's context (none or
// one; the token is never shown).
func (s *Server) pushConfigs(c *call, id string) ([]PushConfig, error) {
	wf, _, _, err := s.loadTask(c, id)
	if err != nil {
		return nil, err
	}
	out := []PushConfig{}
	if s.opts.Subscriptions == nil {
		return out, nil
	}
	sub, err := s.opts.Subscriptions.WebhookSubscription(c.ctx, wf.ID)
	if err != nil {
		return nil, err
	}
	if sub != nil && sub.Format == workflow.WebhookFormatA2A {
		out = append(out, PushConfig{ID: pushConfigID, TaskID: id, URL: sub.URL})
	}
	return out, nil
}

func (s *Server) getPushConfig(c *call, params json.RawMessage) (any, error) {
	var in pushConfigRequest
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	cfgs, err := s.pushConfigs(c, in.TaskID)
	if err != nil {
		return nil, err
	}
	for _, p := range cfgs {
		if p.ID == in.ID || in.ID == "" {
			return p, nil
		}
	}
	return nil, invalidParams("task " + quote(in.TaskID) + " has no push notification config " + quote(in.ID))
}

func (s *Server) listPushConfigs(c *call, params json.RawMessage) (any, error) {
	var in pushConfigRequest
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	cfgs, err := s.pushConfigs(c, in.TaskID)
	if err != nil {
		return nil, err
	}
	return pushConfigList{Configs: cfgs}, nil
}

func (s *Server) deletePushConfig(c *call, params json.RawMessage) (any, error) {
	var in pushConfigRequest
	if err := decodeParams(params, &in); err != nil {
		return nil, err
	}
	if _, err := s.pushConfigs(c, in.TaskID); err != nil {
		return nil, err
	}
	return nil, unsupported("a context's push notification config stays for its life: deleting the workflow ends it")
}
