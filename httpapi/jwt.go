package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWTConfig configures bearer JWTs beside static tokens (DESIGN §9.7).
type JWTConfig struct {
	// JWKS is a file path or an http(s) URL of the JSON Web Key Set the
	// tokens are signed with (GATEWAY_JWT_JWKS).
	JWKS string
	// Issuer and Audience must match the token's iss and one of its aud
	// (GATEWAY_JWT_ISSUER, GATEWAY_JWT_AUDIENCE); both are required.
	Issuer, Audience string
	// AdminClaim is "name" or "name=value": a token whose claim name holds
	// value (a string, or a list containing it) may use /admin. Default
	// "roles" with value "twostep-admin" (GATEWAY_JWT_ADMIN_CLAIM).
	AdminClaim string
	// HTTPClient fetches a JWKS URL (nil: a client with a 5 s timeout).
	HTTPClient *http.Client
	// Now is the clock tokens are checked against (nil: time.Now).
	Now func() time.Time
}

// jwtAlgorithms are the signature algorithms accepted: asymmetric only, so
// a token "signed" with the public key as an HMAC secret (HS/RS confusion)
// and "alg: none" are refused by the parser.
var jwtAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// jwksRefresh is how long fetched keys are used before a refresh; an
// unknown key id triggers one early, at most every jwksMinRefresh.
const (
	jwksRefresh    = 10 * time.Minute
	jwksMinRefresh = 30 * time.Second
	jwtLeeway      = 30 * time.Second
)

// JWTVerifier checks bearer JWTs against a JWKS (go-jose does the
// cryptography). It is safe for concurrent use.
type JWTVerifier struct {
	cfg        JWTConfig
	claim, val string

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	fetched time.Time
}

// NewJWTVerifier loads the key set once (an unusable JWKS stops start-up)
// and returns the verifier.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	if cfg.JWKS == "" || cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("GATEWAY_JWT_JWKS, GATEWAY_JWT_ISSUER and GATEWAY_JWT_AUDIENCE must all be set")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := &JWTVerifier{cfg: cfg, claim: "roles", val: "twostep-admin"}
	if cfg.AdminClaim != "" {
		v.claim, v.val, _ = strings.Cut(cfg.AdminClaim, "=")
		if v.val == "" {
			v.val = "twostep-admin"
		}
	}
	keys, err := v.load(context.Background())
	if err != nil {
		return nil, fmt.Errorf("GATEWAY_JWT_JWKS: %w", err)
	}
	v.keys, v.fetched = keys, cfg.Now()
	return v, nil
}

// load reads the key set from the file or URL.
func (v *JWTVerifier) load(ctx context.Context) (*jose.JSONWebKeySet, error) {
	var data []byte
	var err error
	if strings.HasPrefix(v.cfg.JWKS, "https://") || strings.HasPrefix(v.cfg.JWKS, "http://") {
		data, err = v.fetch(ctx)
	} else {
		data, err = os.ReadFile(v.cfg.JWKS)
	}
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("the key set has no keys")
	}
	return &set, nil
}

func (v *JWTVerifier) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKS, nil)
	if err != nil {
		return nil, err
	}
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, errors.New("the key set URL could not be fetched")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set URL answered HTTP %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// keySet returns the keys, refreshing a URL's set when it is old or when
// kid is unknown (rotation), at most every jwksMinRefresh; a failed
// refresh keeps the keys there are.
func (v *JWTVerifier) keySet(kid string) *jose.JSONWebKeySet {
	v.mu.Lock()
	defer v.mu.Unlock()
	isURL := strings.Contains(v.cfg.JWKS, "://")
	age := v.cfg.Now().Sub(v.fetched)
	stale := age >= jwksRefresh || (len(v.keys.Key(kid)) == 0 && age >= jwksMinRefresh)
	if isURL && stale {
		if keys, err := v.load(context.Background()); err == nil {
			v.keys = keys
		}
		v.fetched = v.cfg.Now()
	}
	return v.keys
}

// Verify checks a compact JWT: an accepted algorithm, a known key id, a
// valid signature, the issuer, the audience, an expiry in the future (30 s
// leeway) and a subject. It returns the subject as the user id and
// whether the admin claim is present.
func (v *JWTVerifier) Verify(token string) (userID string, admin bool, err error) {
	tok, err := jwt.ParseSigned(token, jwtAlgorithms)
	if err != nil {
		return "", false, errors.New("not a signed JWT with an accepted algorithm")
	}
	if len(tok.Headers) != 1 {
		return "", false, errors.New("one signature expected")
	}
	keys := v.keySet(tok.Headers[0].KeyID)
	var claims jwt.Claims
	var extra map[string]any
	if err := tok.Claims(keys, &claims, &extra); err != nil {
		return "", false, errors.New("the signature does not verify with a key of the key set")
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience},
		Time: v.cfg.Now()}, jwtLeeway); err != nil {
		return "", false, err
	}
	if claims.Expiry == nil {
		return "", false, errors.New("the token has no expiry")
	}
	if claims.Subject == "" || strings.ContainsAny(claims.Subject, " \t/") {
		return "", false, errors.New("the token has no usable subject")
	}
	switch c := extra[v.claim].(type) {
	case string:
		admin = c == v.val || slices.Contains(strings.Fields(c), v.val)
	case []any:
		admin = slices.Contains(c, any(v.val))
	}
	return claims.Subject, admin, nil
}
