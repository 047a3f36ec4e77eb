package test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// procKB reads a "Name:   123 kB" line of /proc/<pid>/status.
func procKB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return 0
}

// uploadBody is a create request carrying one document of content.
func uploadBody(name string, content []byte) []byte {
	return []byte(`{"prompt":"keep ` + name + `","documents":[{"name":"` + name + `","mimeType":"application/octet-stream","content":"` +
		base64.StdEncoding.EncodeToString(content) + `"}]}`)
}

// TestConcurrentLargeUploads: four 8 MiB uploads in flight at once fill
// limits.maxInflightUploadBytes with the bytes they sent, so a fifth is
// answered 503 with Retry-After once its first bytes do not fit; the four
// then complete, each
// document is stored byte for byte, the refused one left nothing behind,
// and the process's peak RSS grew by at most 2.5 times the bytes
// uploaded (the figure is logged).
func TestConcurrentLargeUploads(t *testing.T) {
	const (
		n       = 4
		docSize = 8 << 20
	)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	body0 := uploadBody("up0.bin", make([]byte, docSize))
	reserve := int64(len(body0))
	yaml := fmt.Sprintf("limits:\n  maxBodyBytes: %d\n  maxInflightUploadBytes: %d\n  maxInflightUploadBytesPerUser: %[2]d\n", reserve+4096, n*reserve+4096)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	// No model server: each round fails at its first model call, so nothing
	// but the uploads themselves takes memory.
	g := startGatewayBin(t, plainGatewayBin, nil, nil, "GATEWAY_CONFIG="+cfg, "LOG_LEVEL=warn")
	pid := g.cmd.Process.Pid
	base := procKB(t, pid, "VmRSS")

	docs := make([][]byte, n)
	bodies := make([][]byte, n)
	for i := range docs {
		docs[i] = make([]byte, docSize)
		_, _ = rand.Read(docs[i])
		bodies[i] = uploadBody(fmt.Sprintf("up%d.bin", i), docs[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	post := func(body io.Reader, length int64) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", g.url+"/api/v1/workflows", body)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+gwAlice)
		return http.DefaultClient.Do(req)
	}

	// Each upload sends all but its last byte, and the gateway holds them
	// (its in-flight gauge says so); the last byte waits until the fifth
	// was refused.
	var wg sync.WaitGroup
	codes := make([]int, n)
	rest := make([]chan struct{}, n)
	for i := range n {
		pr, pw := io.Pipe()
		started := make(chan struct{})
		rest[i] = make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = pw.Write(bodies[i][:len(bodies[i])-1])
			close(started)
			<-rest[i]
			_, _ = pw.Write(bodies[i][len(bodies[i])-1:])
			pw.Close()
		}()
		go func() {
			defer wg.Done()
			resp, err := post(pr, int64(len(bodies[i])))
			if err != nil {
				t.Errorf("upload %d: %v", i, err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("an upload never started")
		}
	}
	waitMetric(t, g, "twostep_http_inflight_body_bytes", float64(n*(len(body0)-1)))
	resp, err := post(bytes.NewReader(bodies[0]), int64(len(bodies[0])))
	if err != nil {
		t.Fatalf("fifth upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("fifth upload = %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for i := range n {
		close(rest[i])
	}
	wg.Wait()
	peak := procKB(t, pid, "VmHWM")
	for i, c := range codes {
		if c != http.StatusCreated {
			t.Errorf("upload %d answered %d, want 201", i, c)
		}
	}
	ratio := float64(peak-base) * 1024 / float64(n*docSize)
	t.Logf("RSS %d kB before, peak %d kB after %d concurrent %d MiB uploads: %.2f × the bytes uploaded", base, peak, n, docSize>>20, ratio)
	if ratio > 2.5 {
		t.Errorf("peak RSS grew by %.2f × the bytes uploaded, want at most 2.5", ratio)
	}

	c, err := client.New(g.url, gwAlice)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(ctx, client.ListOptions{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Workflows) != n {
		t.Fatalf("%d workflows stored, want %d (the refused upload must leave nothing)", len(page.Workflows), n)
	}
	for _, w := range page.Workflows {
		msgs, err := c.Messages(ctx, w.ID, 0)
		if err != nil || len(msgs) == 0 || len(msgs[0].Documents) != 1 {
			t.Fatalf("messages of %s = %+v, %v", w.ID, msgs, err)
		}
		d := msgs[0].Documents[0]
		var i int
		if _, err := fmt.Sscanf(d.Name, "up%d.bin", &i); err != nil || i >= n {
			t.Fatalf("document %q", d.Name)
		}
		r, _, err := c.Document(ctx, w.ID, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || d.Size != docSize || !bytes.Equal(got, docs[i]) {
			t.Errorf("document %s: %d bytes (size %d), equal %v, %v", d.Name, len(got), d.Size, bytes.Equal(got, docs[i]), err)
		}
	}
}
