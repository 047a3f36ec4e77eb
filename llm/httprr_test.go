package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

// exchange is one recorded request and its wire-format response.
type exchange struct {
	req      *http.Request
	reqBody  []byte
	respWire string
}

// readHTTPRR parses an "httprr trace v1" file: a header line, then records
// of "N1 N2\n" followed by N1 bytes of request and N2 bytes of response.
func readHTTPRR(path string) ([]exchange, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseHTTPRR(string(data))
}

func parseHTTPRR(data string) ([]exchange, error) {
	header, data, ok := strings.Cut(data, "\n")
	if !ok || strings.TrimSuffix(header, "\r") != "httprr trace v1" {
		return nil, fmt.Errorf("not an httprr trace")
	}
	var out []exchange
	for data != "" {
		var line string
		line, data, ok = strings.Cut(data, "\n")
		f1, f2, _ := strings.Cut(strings.TrimSuffix(line, "\r"), " ")
		n1, err1 := strconv.Atoi(f1)
		n2, err2 := strconv.Atoi(f2)
		if !ok || err1 != nil || err2 != nil || n1 < 0 || n2 < 0 || n1 > len(data) || n2 > len(data)-n1 {
			return nil, fmt.Errorf("corrupt httprr record %d", len(out)+1)
		}
		reqWire, respWire := data[:n1], data[n1:n1+n2]
		data = data[n1+n2:]
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(reqWire)))
		if err != nil {
			return nil, fmt.Errorf("httprr record %d: %w", len(out)+1, err)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, fmt.Errorf("httprr record %d body: %w", len(out)+1, err)
		}
		out = append(out, exchange{req: req, reqBody: body, respWire: respWire})
	}
	return out, nil
}

// replayer is an http.RoundTripper that answers each request with the first
// unused recorded exchange for the same method and URL. Bodies differ from
// the recordings (twostep sends its own prompts), so it matches on what the
// adapter must get right: the endpoint, the model, and the credential
// header. It keeps every body it was sent for assertions.
type replayer struct {
	mu     sync.Mutex
	log    []exchange
	used   []bool
	bodies [][]byte
}

func newReplayer(log []exchange) *replayer {
	return &replayer{log: log, used: make([]bool, len(log))}
}

// authHeaders are the credential headers the providers use.
var authHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"}

// RoundTrip implements http.RoundTripper.
func (r *replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	for i, ex := range r.log {
		if r.used[i] || ex.req.Method != req.Method || ex.req.URL.String() != req.URL.String() {
			continue
		}
		if err := sameModelAndAuth(ex, req, body); err != nil {
			return nil, err
		}
		r.used[i] = true
		return http.ReadResponse(bufio.NewReader(strings.NewReader(ex.respWire)), req)
	}
	return nil, fmt.Errorf("replayer: no recorded exchange for %s %s", req.Method, req.URL)
}

func sameModelAndAuth(ex exchange, req *http.Request, body []byte) error {
	for _, h := range authHeaders {
		if want := ex.req.Header.Get(h); want != "" && req.Header.Get(h) != want {
			return fmt.Errorf("replayer: header %s differs from the recording", h)
		}
	}
	var want, got struct{ Model string }
	_ = json.Unmarshal(ex.reqBody, &want)
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Errorf("replayer: request body is not JSON: %w", err)
	}
	if want.Model != got.Model {
		return fmt.Errorf("replayer: model %q, recording has %q", got.Model, want.Model)
	}
	return nil
}

// sent returns the JSON body of the n-th request (from 0) decoded into v.
func (r *replayer) sent(n int, v any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n >= len(r.bodies) {
		return fmt.Errorf("only %d requests sent", len(r.bodies))
	}
	return json.NewDecoder(bytes.NewReader(r.bodies[n])).Decode(v)
}
