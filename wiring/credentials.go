package wiring

import "github.com/twostep/twostep/httpapi"

// ApplyCredentialRule applies the credential rule to a process that serves
// the API (api) or only the probes. With no tokens, admins or JWKS, an API
// process refuses to start (httpapi.ErrNoCredentials) unless
// GATEWAY_INSECURE_DEV is set, and then runs open: open reports that, so
// the caller warns. A worker without credentials serves only the probes,
// which need none (but /metrics, which needs GATEWAY_METRICS_TOKEN): its
// API authenticator is built as insecure but is unreachable. Call it before the store and the model are opened.
func (c *Config) ApplyCredentialRule(api bool) (open bool, err error) {
	none := len(c.Users) == 0 && len(c.Admins) == 0 && c.JWTJWKS == ""
	switch {
	case !none:
		return false, nil
	case api && !c.InsecureDev:
		return false, httpapi.ErrNoCredentials
	case !api:
		c.InsecureDev, c.probesOnly = true, true
		return false, nil
	}
	return true, nil
}
