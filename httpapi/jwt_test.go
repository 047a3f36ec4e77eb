package httpapi

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// jwtFixture is a JWKS file with one RSA key and a signer for it.
type jwtFixture struct {
	path string
	key  *rsa.PrivateKey
	now  time.Time
}

func newJWTFixture(t *testing.T) *jwtFixture {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}}
	data, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &jwtFixture{path: path, key: key, now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
}

func (f *jwtFixture) sign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (f *jwtFixture) claims(over map[string]any) map[string]any {
	c := map[string]any{"iss": "https://idp.example.test", "aud": "twostep", "sub": "erin",
		"exp": f.now.Add(time.Hour).Unix(), "iat": f.now.Unix()}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// TestJWTAuth: a token signed by the JWKS's key for the right issuer and
// audience acts as its subject, and as an admin with the admin role; every
// forged, expired or misdirected token is a 401 problem, and a user's
// token is a 403 on /admin.
func TestJWTAuth(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	v, err := NewJWTVerifier(JWTConfig{JWKS: f.path, Issuer: "https://idp.example.test", Audience: "twostep",
		Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuthenticator(nil, nil, false, v)
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, func(o *Options) { o.Auth = auth })

	user := f.sign(t, jose.RS256, f.key, "k1", f.claims(nil))
	admin := f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"sub": "root", "roles": []string{"reader", "twostep-admin"}}))
	if rec := env.do(t, "GET", "/api/v1/workflows", user, nil); rec.Code != http.StatusOK {
		t.Errorf("valid token: %d %s", rec.Code, rec.Body)
	}
	if rec := env.do(t, "GET", "/admin/v1/templates", user, nil); rec.Code != http.StatusForbidden {
		t.Errorf("user token on /admin: %d, want 403", rec.Code)
	}
	if rec := env.do(t, "GET", "/admin/v1/templates", admin, nil); rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
		t.Errorf("admin token on /admin: %d, want it let through", rec.Code)
	}

	pub, _ := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(f.claims(nil))
	bad := map[string]string{
		"expired":         f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"exp": f.now.Add(-time.Hour).Unix()})),
		"no expiry":       f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"exp": nil})),
		"wrong issuer":    f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"iss": "https://evil.example.test"})),
		"wrong audience":  f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"aud": "someone-else"})),
		"unknown kid":     f.sign(t, jose.RS256, f.key, "k9", f.claims(nil)),
		"other key":       f.sign(t, jose.RS256, other, "k1", f.claims(nil)),
		"no subject":      f.sign(t, jose.RS256, f.key, "k1", f.claims(map[string]any{"sub": nil})),
		"HS/RS confusion": f.sign(t, jose.HS256, pub, "k1", f.claims(nil)),
		"alg none":        b64([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`)) + "." + b64(payload) + ".",
		"garbage":         "a.b.c",
	}
	for name, tok := range bad {
		rec := env.do(t, "GET", "/api/v1/workflows", tok, nil)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want a 401 problem", name, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

// TestSHA256Tokens: a token configured as its SHA-256 authenticates with
// the plain token, which never has to sit in the environment.
func TestSHA256Tokens(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("plain-token-for-dana-0123"))
	creds, err := ParseCredentials("dana:sha256:" + hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuthenticator(creds, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user, _, ok := auth.Identify("plain-token-for-dana-0123"); !ok || user != "dana" {
		t.Errorf("Identify = %q, %v; want dana", user, ok)
	}
	if _, _, ok := auth.Identify(hex.EncodeToString(sum[:])); ok {
		t.Error("the digest itself was accepted as a token")
	}
}
