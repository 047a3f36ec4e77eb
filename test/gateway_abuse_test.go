package test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricFloat reads one series from g's /metrics; -1 when absent.
func metricFloat(t *testing.T, g *gateway, series string) float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+gwMetrics)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return -1
}

// waitMetric waits (up to 20 s) until series reaches at least want.
func waitMetric(t *testing.T, g *gateway, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := metricFloat(t, g, series)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, want at least %v", series, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rawPost sends body to path as alice with the given Content-Length (-1:
// chunked) and returns the status and the answer.
func rawPost(t *testing.T, g *gateway, path, token string, body io.Reader, length int64) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", g.url+path, body)
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

// TestArrayBodiesAnswerSmall: bodies of half a million numbers where the
// documents (or an unknown field) should be, on both upload routes, are
// each answered with one 422 of at most 64 KiB, and the gateway's peak
// RSS grows by far less than the bodies would make it parse (before the
// limits were enforced while reading, the first one alone answered 38 MB
// and grew the process by hundreds of MB).
func TestArrayBodiesAnswerSmall(t *testing.T) {
	g := startGatewayBin(t, plainGatewayBin, nil, nil, "LOG_LEVEL=warn")
	pid := g.cmd.Process.Pid
	var wf struct{ ID string }
	g.expect(t, 201, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "x"}, &wf)
	base := procKB(t, pid, "VmHWM")
	ones := bytes.Repeat([]byte("1,"), 500_000)
	ones = ones[:len(ones)-1]
	for _, tt := range []struct{ name, path, field string }{
		{"create", "/api/v1/workflows", "documents"},
		{"rounds", "/api/v1/workflows/" + wf.ID + "/rounds", "documents"},
		{"unknown field", "/api/v1/workflows", "junk"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := append([]byte(`{"prompt":"x","`+tt.field+`":[`), ones...)
			body = append(body, "]}"...)
			for _, length := range []int64{int64(len(body)), -1} {
				status, answer := rawPost(t, g, tt.path, gwAlice, bytes.NewReader(body), length)
				if status != http.StatusUnprocessableEntity || len(answer) > 64<<10 {
					t.Errorf("length %d: %d with %d bytes, want 422 of at most 64 KiB: %.300s", length, status, len(answer), answer)
				}
			}
		})
	}
	peak := procKB(t, pid, "VmHWM")
	t.Logf("peak RSS %d kB before, %d kB after six bodies of %d bytes", base, peak, len(ones))
	if grew := (peak - base) << 10; grew > 32<<20 {
		t.Errorf("peak RSS grew by %d MiB, want at most 32", grew>>20)
	}
}

// TestChunkedTinyDocumentsHeap: a chunked body of five thousand empty
// documents is refused at the 21st, and the heap afterwards holds no
// per-document buffers (before, each document kept 64 KiB: 320 MB).
func TestChunkedTinyDocumentsHeap(t *testing.T) {
	g := startGatewayBin(t, plainGatewayBin, nil, nil, "LOG_LEVEL=warn")
	var b bytes.Buffer
	b.WriteString(`{"prompt":"x","documents":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"a%d.txt","content":""}`, i)
	}
	b.WriteString("]}")
	status, answer := rawPost(t, g, "/api/v1/workflows", gwAlice, io.MultiReader(&b), -1)
	if status != http.StatusUnprocessableEntity || !bytes.Contains(answer, []byte("more than 20 documents")) {
		t.Errorf("%d %.300s, want 422 naming the document limit", status, answer)
	}
	heap := metricFloat(t, g, "go_memstats_heap_alloc_bytes")
	t.Logf("heap after the body: %.1f MiB", heap/(1<<20))
	if heap > 48<<20 {
		t.Errorf("heap holds %.0f MiB after a refused body of empty documents, want at most 48", heap/(1<<20))
	}
}

// TestTrickledBodiesDoNotStarveOthers: alice opens four connections that
// each declare a 32 MiB body and trickle it a byte at a time (together
// the whole in-flight budget as declared); bob's create is served at once,
// and each of alice's bodies is dropped with 408 for arriving slower than
// the minimum rate.
func TestTrickledBodiesDoNotStarveOthers(t *testing.T) {
	g := startGatewayBin(t, plainGatewayBin, nil, nil, "LOG_LEVEL=warn")
	host := strings.TrimPrefix(g.url, "http://")
	conns := make([]net.Conn, 4)
	for i := range conns {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /api/v1/workflows HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"prompt\":\"",
			host, gwAlice, 32<<20)
		conns[i] = c
	}
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, c := range conns {
					_, _ = c.Write([]byte("x"))
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the four bodies are being read
	status, answer := rawPost(t, g, "/api/v1/workflows", gwBob, strings.NewReader(`{"prompt":"bob's work"}`), 23)
	if status != http.StatusCreated {
		t.Errorf("bob's create while alice trickles: %d %s, want 201", status, answer)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Errorf("alice's connection %d: %v, want a 408", i, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("alice's connection %d: %d, want 408", i, resp.StatusCode)
		}
	}
	close(stop)
	<-trickled
}
