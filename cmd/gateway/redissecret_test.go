package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRedisURLPasswordNeverInErrors: the Redis URL may carry a password,
// and the startup error (printed, and usually shipped to a log system)
// must not, however the URL is malformed or wherever Redis is.
func TestRedisURLPasswordNeverInErrors(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"redis://:s3cr3t-pw@[bad/0",
		"redis://user:s3cr3t-pw%zz@127.0.0.1:6379/0",
		"redis://user:s3cr3t-pw@127.0.0.1:6379/notanumber",
		"redis://:s3cr3t-pw@127.0.0.1:1/0",
	} {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := envOf(map[string]string{"GATEWAY_TOKENS": "alice:alice-token-000000001", "LLM_PROVIDER": "scripted",
				"GATEWAY_ADDR": "127.0.0.1:0", "REDIS_URL": url})
			err := realMain(context.Background(), nil, env, &stdout, &stderr)
			if err == nil {
				t.Fatal("serve started with an unusable REDIS_URL")
			}
			if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, "s3cr3t") {
				t.Errorf("the Redis password leaked: %s", out)
			}
			if !strings.Contains(err.Error(), "REDIS_URL") {
				t.Errorf("err = %v, want it to name REDIS_URL", err)
			}
		})
	}
}
