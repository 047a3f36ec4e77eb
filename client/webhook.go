package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's webhook-timestamp may be from
// the receiver's clock for VerifyWebhook to accept it (replay protection).
const WebhookTolerance = 5 * time.Minute

// Errors of VerifyWebhook.
var (
	ErrWebhookHeaders   = errors.New("client: webhook-id, webhook-timestamp or webhook-signature missing or malformed")
	ErrWebhookTimestamp = errors.New("client: webhook-timestamp is too far from now")
	ErrWebhookSignature = errors.New("client: no webhook-signature matches")
)

// VerifyWebhook checks a delivery the gateway sent, as the Standard
// Webhooks specification says: one of the space-separated "v1,<base64>"
// signatures of webhook-signature must equal HMAC-SHA256, keyed with the
// secret ("whsec_<base64>": the decoded bytes; any other form: its
// bytes), of "<webhook-id>.<webhook-timestamp>.<body>", compared in
// constant time, and webhook-timestamp must be within WebhookTolerance of
// now. body must be the raw bytes received.
func VerifyWebhook(secret string, headers http.Header, body []byte) error {
	return verifyWebhookAt(secret, headers, body, time.Now())
}

func verifyWebhookAt(secret string, headers http.Header, body []byte, now time.Time) error {
	id, ts, sigs := headers.Get("webhook-id"), headers.Get("webhook-timestamp"), headers.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrWebhookHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrWebhookHeaders
	}
	if d := now.Sub(time.Unix(sec, 0)); d > WebhookTolerance || d < -WebhookTolerance {
		return ErrWebhookTimestamp
	}
	key := []byte(secret)
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if k, err := base64.StdEncoding.DecodeString(rest); err == nil {
			key = k
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}

// Usage returns the caller's budget usage; a *Problem with status 404
// when no budget applies.
func (c *Client) Usage(ctx context.Context) (*Usage, error) {
	var u Usage
	if _, err := c.do(ctx, "GET", "/api/v1/usage", nil, nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}
