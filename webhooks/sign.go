package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// SecretPrefix starts a Standard Webhooks secret: "whsec_" and the key in
// base64.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh secret in the Standard Webhooks form: 24
// random bytes, "whsec_" + base64.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Key returns the signing key of secret: the base64-decoded part after
// "whsec_", or, for a secret without that prefix that is not valid base64
// after it, its bytes as they are (operators' standing secrets).
func Key(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, SecretPrefix); ok {
		if k, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return k
		}
	}
	return []byte(secret)
}

// Sign returns the webhook-signature header value of one delivery:
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)).
func Sign(secret, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, Key(secret))
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
