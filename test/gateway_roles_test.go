package test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestAPIAndWorkerInstances (Redis): an API-only instance (serve
// --workers=0) accepts rounds that a worker-only instance runs; the worker
// serves only the probes, and starts without any token.
func TestAPIAndWorkerInstances(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	api := startGatewayWith(t, model, []string{"serve", "--workers=0"}, "REDIS_URL="+url)
	// A worker serves no API, so it needs no tokens (DESIGN §9.3).
	worker := startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url, "GATEWAY_TOKENS=", "GATEWAY_ADMIN_TOKENS=")
	ids := make([]string, 3)
	for i := range ids {
		var wf wfView
		api.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice,
			map[string]any{"prompt": fmt.Sprintf("roles%d go", i)}, &wf)
		ids[i] = wf.ID
	}
	for _, id := range ids {
		if w := api.waitDone(t, gwAlice, id); w.Status != "completed" {
			t.Errorf("round %s on the worker: %+v", id, w)
		}
		api.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+id, gwAlice, nil, nil)
	}
	worker.expect(t, http.StatusOK, "GET", "/readyz", "", nil, nil)
	worker.expect(t, http.StatusNotFound, "GET", "/api/v1/workflows", gwAlice, nil, nil)
}
