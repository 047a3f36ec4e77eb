package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twostep/twostep/wiring"
)

func TestParseRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd     string
		args    []string
		want    role
		wantErr string
	}{
		{"serve", nil, role{api: true, workers: true}, ""},
		{"serve", []string{"--workers=0"}, role{api: true}, ""},
		{"worker", nil, role{workers: true}, ""},
		{"serve", []string{"--workers=3"}, role{}, "only 0"},
		{"serve", []string{"--bogus"}, role{}, "bogus"},
		{"worker", []string{"x"}, role{}, "no arguments"},
	}
	for _, tt := range tests {
		got, err := parseRole(tt.cmd, tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s %v: err %v, want one naming %q", tt.cmd, tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %v = %+v, %v; want %+v", tt.cmd, tt.args, got, err, tt.want)
		}
	}
	if err := (role{api: true}).check(wiring.Config{}); err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Errorf("an API-only instance on the memory store was accepted: %v", err)
	}
}

func TestProbeRoutesServeOnlyProbes(t *testing.T) {
	t.Parallel()
	full := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	h := probeRoutes(full)
	for path, want := range map[string]int{"/healthz": 299, "/readyz": 299, "/metrics": 299,
		"/api/v1/workflows": 404, "/admin/": 404, "/": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
		if want == 404 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: 404 is not a problem: %q", path, rec.Header().Get("Content-Type"))
		}
	}
}
