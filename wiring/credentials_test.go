package wiring

import (
	"errors"
	"testing"

	"github.com/twostep/twostep/httpapi"
)

// TestApplyCredentialRule: an API process without credentials refuses to
// start unless insecure dev is on (then it runs open); a worker without
// credentials serves its probes as insecure dev; credentials change nothing.
func TestApplyCredentialRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		cfg          Config
		api          bool
		wantOpen     bool
		wantErr      error
		wantInsecure bool
		wantMetrics  bool // /metrics open without a token
	}{
		{"api without credentials", Config{}, true, false, httpapi.ErrNoCredentials, false, false},
		{"api insecure dev", Config{InsecureDev: true}, true, true, nil, true, true},
		{"worker without credentials", Config{}, false, false, nil, true, false},
		{"worker insecure dev", Config{InsecureDev: true}, false, false, nil, true, false},
		{"api with a JWKS", Config{JWTJWKS: "https://idp.example/jwks"}, true, false, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			open, err := cfg.ApplyCredentialRule(tt.api)
			if open != tt.wantOpen || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) || cfg.InsecureDev != tt.wantInsecure {
				t.Errorf("open %v, err %v, insecure %v; want %v, %v, %v", open, err, cfg.InsecureDev, tt.wantOpen, tt.wantErr, tt.wantInsecure)
			}
			if got := cfg.MetricsOpen(); got != tt.wantMetrics {
				t.Errorf("MetricsOpen = %v, want %v", got, tt.wantMetrics)
			}
		})
	}
}
