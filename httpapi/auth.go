package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// DevUser is the user every request maps to in insecure development mode.
const DevUser = "dev"

// Credential is one userId:token pair of GATEWAY_TOKENS or
// GATEWAY_ADMIN_TOKENS.
type Credential struct {
	UserID string
	Token  string
	// Digest is the token's SHA-256 when it was given as
	// userId:sha256:<hex> (Token is then empty): the plain token need not
	// sit in the environment.
	Digest []byte
}

// Sum returns the SHA-256 the credential is matched by.
func (c Credential) Sum() [sha256.Size]byte {
	if len(c.Digest) == sha256.Size {
		return [sha256.Size]byte(c.Digest)
	}
	return sha256.Sum256([]byte(c.Token))
}

// ParseCredentials parses a comma-separated list of userId:token pairs. It
// reports every malformed entry at once; the error never contains a token.
func ParseCredentials(s string) ([]Credential, error) {
	var creds []Credential
	var problems []string
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		user, token, ok := strings.Cut(part, ":")
		user, token = strings.TrimSpace(user), strings.TrimSpace(token)
		switch {
		case !ok || user == "" || token == "":
			problems = append(problems, fmt.Sprintf("entry %d is not userId:token", i+1))
		case strings.ContainsAny(user, " \t/"):
			problems = append(problems, fmt.Sprintf("entry %d: user id %q contains spaces or slashes", i+1, user))
		case strings.HasPrefix(token, "sha256:"):
			sum, err := hex.DecodeString(strings.TrimPrefix(token, "sha256:"))
			if err != nil || len(sum) != sha256.Size {
				problems = append(problems, fmt.Sprintf("entry %d: user %q: sha256: must be followed by 64 hex digits", i+1, user))
				continue
			}
			creds = append(creds, Credential{UserID: user, Digest: sum})
		default:
			creds = append(creds, Credential{UserID: user, Token: token})
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return creds, nil
}

type hashedCredential struct {
	userID string
	sum    [sha256.Size]byte
}

// Authenticator maps bearer tokens to users. Tokens are compared in constant
// time (over their SHA-256 digests, so length leaks nothing) against every
// configured credential, with no early exit.
type Authenticator struct {
	users    []hashedCredential
	admins   []hashedCredential
	insecure bool
	jwt      *JWTVerifier
}

// ErrNoCredentials is the refusal to serve with no user, admin or JWT
// credentials unless GATEWAY_INSECURE_DEV is set.
var ErrNoCredentials = errors.New("no tokens configured: set GATEWAY_TOKENS=userId:token,... or GATEWAY_JWT_JWKS (or GATEWAY_INSECURE_DEV=1 for local development only)")

// NewAuthenticator returns an Authenticator for the given user and admin
// credentials and, when jwt is not nil, bearer JWTs it verifies. With
// neither configured it fails unless insecureDev is set, in which case
// every request is user DevUser (also an admin).
func NewAuthenticator(users, admins []Credential, insecureDev bool, jwt *JWTVerifier) (*Authenticator, error) {
	none := len(users) == 0 && len(admins) == 0 && jwt == nil
	if none && !insecureDev {
		return nil, ErrNoCredentials
	}
	a := &Authenticator{insecure: none, jwt: jwt}
	for _, c := range users {
		a.users = append(a.users, hashedCredential{c.UserID, c.Sum()})
	}
	for _, c := range admins {
		a.admins = append(a.admins, hashedCredential{c.UserID, c.Sum()})
	}
	return a, nil
}

// Insecure reports whether every request is mapped to DevUser.
func (a *Authenticator) Insecure() bool { return a.insecure }

// Identify returns the user a token belongs to and whether it is an admin
// token; ok is false for an unknown token. Admin tokens also act as their
// user on /api routes.
func (a *Authenticator) Identify(token string) (userID string, admin, ok bool) {
	if a.insecure {
		return DevUser, true, true
	}
	sum := sha256.Sum256([]byte(token))
	for _, c := range a.admins {
		if subtle.ConstantTimeCompare(sum[:], c.sum[:]) == 1 {
			userID, admin, ok = c.userID, true, true
		}
	}
	for _, c := range a.users {
		if subtle.ConstantTimeCompare(sum[:], c.sum[:]) == 1 && !ok {
			userID, ok = c.userID, true
		}
	}
	if !ok && a.jwt != nil && strings.Count(token, ".") == 2 {
		if user, isAdmin, err := a.jwt.Verify(token); err == nil {
			return user, isAdmin, true
		}
	}
	return userID, admin, ok
}

type userKey struct{}

// WithUser returns ctx carrying the authenticated user id.
func WithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// UserFrom returns the authenticated user id carried by ctx ("" if none).
func UserFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// authenticate guards /api (any valid token) and /admin (an admin token)
// before routing, so even an unknown /admin path answers 401/403 first.
// Other paths (health, metrics, OpenAPI) and the admin viewer page's own
// files (isAdminPage; they hold no data) are public.
func (s *Server) authenticate() gin.HandlerFunc {
	return func(c *gin.Context) {
		path := c.Request.URL.Path
		needAdmin := (path == "/admin" || strings.HasPrefix(path, "/admin/")) && !isAdminPage(c.Request.Method, path)
		if !needAdmin && !s.needsUser(path) {
			c.Next()
			return
		}
		token, found := bearerToken(c.GetHeader("Authorization"))
		if !found && !s.auth.Insecure() {
			c.Header("WWW-Authenticate", `Bearer realm="twostep"`)
			writeProblem(c, http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
			return
		}
		user, admin, ok := s.auth.Identify(token)
		if !ok {
			c.Header("WWW-Authenticate", `Bearer realm="twostep", error="invalid_token"`)
			writeProblem(c, http.StatusUnauthorized, "unknown token")
			return
		}
		if needAdmin && !admin {
			writeProblem(c, http.StatusForbidden, "this route needs an admin token")
			return
		}
		ctx := WithUser(c.Request.Context(), user)
		if l := loggerFrom(ctx); l != nil {
			ctx = l.With().Str("user", user).Logger().WithContext(ctx)
		}
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

func bearerToken(h string) (string, bool) {
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		t := strings.TrimSpace(h[7:])
		return t, t != ""
	}
	return "", false
}
