package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

type healthOutput struct {
	Body apiv1.Health
}

func (s *Server) registerHealth(r *gin.Engine, api huma.API) {
	public := []map[string][]string{}
	huma.Register(api, huma.Operation{
		OperationID: "healthz", Method: http.MethodGet, Path: "/healthz",
		Summary: "Liveness: the process serves requests", Tags: []string{"health"}, Security: public,
	}, func(context.Context, *struct{}) (*healthOutput, error) {
		return &healthOutput{Body: apiv1.Health{Status: "ok"}}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "readyz", Method: http.MethodGet, Path: "/readyz",
		Summary: "Readiness: the store answers and a model is configured", Tags: []string{"health"},
		Security: public, Errors: []int{503},
	}, s.readyz)
	if s.metrics != nil {
		r.GET("/metrics", s.metricsAt.handler(s.metrics.Handler()))
	}
}

// Pinger reports whether the store can serve requests; a workflow.Store
// is one.
type Pinger interface {
	Ping(ctx context.Context) error
}

// readyzPingTimeout bounds the store ping, so /readyz answers within about
// a second even while the store stalls.
const readyzPingTimeout = time.Second

// readyz answers 503 (with Retry-After) naming every failing check, so an
// operator sees at once what is missing; store errors are logged, not
// echoed.
func (s *Server) readyz(ctx context.Context, _ *struct{}) (*healthOutput, error) {
	checks := map[string]string{"store": "ok", "model": "ok"}
	pingCtx, cancel := context.WithTimeout(ctx, readyzPingTimeout)
	defer cancel()
	ready := true
	if err := s.store.Ping(pingCtx); err != nil {
		s.fail(ctx, "readyz", err) //nolint:errcheck // logs the detail; the answer is below
		checks["store"] = "unreachable"
		ready = false
	}
	if s.modelName == "" {
		checks["model"] = "not configured"
		ready = false
	}
	if !ready {
		return nil, huma.ErrorWithHeaders(
			huma.Error503ServiceUnavailable("not ready: store "+checks["store"]+", model "+checks["model"]),
			http.Header{"Retry-After": {strconv.Itoa(max(1, int(s.limits.RetryAfter.Seconds())))}})
	}
	models := s.models
	if len(models) == 0 {
		models = []string{s.modelName}
	}
	status := "ok"
	if s.modelOK != nil {
		if err := s.modelOK(pingCtx); err != nil {
			status, checks["model"] = "degraded", workflow.PublicMessage(err)
		}
	}
	if s.deps != nil {
		for name, state := range s.deps() {
			checks[name] = state
			if state != "ok" {
				status = "degraded"
			}
		}
	}
	return &healthOutput{Body: apiv1.Health{Status: status, Checks: checks, Models: models}}, nil
}
