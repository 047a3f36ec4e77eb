package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/gin-gonic/gin"
)

// metricsGuard answers /metrics only to the bearer token of its own
// (GATEWAY_METRICS_TOKEN): the series describe every user's traffic, so
// neither an anonymous caller nor a user's or admin's token reads them.
// With no metrics token configured it answers 401 saying how to set one;
// open (insecure development mode, where every route is open) serves
// anyone.
type metricsGuard struct {
	sum  *[sha256.Size]byte // nil: no metrics token configured
	open bool
}

// handler wraps the metrics handler h with the guard.
func (g metricsGuard) handler(h http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !g.open {
			token, found := bearerToken(c.GetHeader("Authorization"))
			if g.sum == nil {
				writeProblem(c, http.StatusUnauthorized, "/metrics needs a token of its own: set GATEWAY_METRICS_TOKEN and send it as Authorization: Bearer <token> (Prometheus: authorization.credentials)")
				return
			}
			sum := sha256.Sum256([]byte(token))
			if !found || subtle.ConstantTimeCompare(sum[:], g.sum[:]) != 1 {
				c.Header("WWW-Authenticate", `Bearer realm="twostep-metrics"`)
				writeProblem(c, http.StatusUnauthorized, "/metrics needs the GATEWAY_METRICS_TOKEN bearer token")
				return
			}
		}
		h.ServeHTTP(c.Writer, c.Request)
	}
}
