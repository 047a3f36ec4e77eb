package client

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// The Standard Webhooks reference libraries' example delivery.
func TestVerifyWebhook(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	sent := time.Unix(1614265330, 0)
	headers := func(sig string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
		h.Set("webhook-timestamp", "1614265330")
		h.Set("webhook-signature", sig)
		return h
	}
	const good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	tests := []struct {
		name   string
		secret string
		h      http.Header
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", secret, headers(good), body, sent, nil},
		{"one of several", secret, headers("v1,bm9wZQ== v2,xyz " + good), body, sent.Add(4 * time.Minute), nil},
		{"tampered body", secret, headers(good), []byte(`{"test": 2432232315}`), sent, ErrWebhookSignature},
		{"other secret", "whsec_bm90IHRoZSBzZWNyZXQ=", headers(good), body, sent, ErrWebhookSignature},
		{"too old", secret, headers(good), body, sent.Add(6 * time.Minute), ErrWebhookTimestamp},
		{"from the future", secret, headers(good), body, sent.Add(-6 * time.Minute), ErrWebhookTimestamp},
		{"no signature", secret, headers(""), body, sent, ErrWebhookHeaders},
		{"v0 only", secret, headers("v0," + good[3:]), body, sent, ErrWebhookSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := verifyWebhookAt(tc.secret, tc.h, tc.body, tc.now); !errors.Is(err, tc.want) {
				t.Errorf("verify = %v, want %v", err, tc.want)
			}
		})
	}
}
