package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// echoNeedsApproval makes every call of the echo action wait for a
// person's decision.
type echoNeedsApproval struct{}

func (echoNeedsApproval) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Echo, workflow.EffectWrite
}
func (echoNeedsApproval) NeedsIntentApproval(string) bool                    { return false }
func (echoNeedsApproval) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (echoNeedsApproval) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// harness is an A2A server over a real engine (React mode, memory store,
// a scripted model) behind a stand-in for the gateway's auth: the bearer
// token is the user's name.
type harness struct {
	t     *testing.T
	srv   *httptest.Server
	store *memstore.Store
	a2a   *a2a.Server
	eng   *enginetest.Engine
	// gone makes every read of a workflow answer not found, as when it
	// was deleted (by another instance) between two reads.
	gone   *atomic.Bool
	pushes []string // URLs CheckPushURL saw
}

// script answers the model's calls in order; a call whose prompt
// contains "SLOW" blocks until it is cancelled instead.
func script(replies ...string) *scripted.Model {
	var mu sync.Mutex
	next := 0
	return &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "SLOW") {
				return "", scripted.ErrBlock
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return "", workflow.Errorf(workflow.KindInvalid, "the script has no reply %d", next)
		}
		next++
		return replies[next-1], nil
	}}
}

func newHarness(t *testing.T, model workflow.Model, policy workflow.ApprovalPolicy) *harness {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := enginetest.Config("a2a")
	cfg.Approvals, cfg.ShutdownGrace = policy, 50*time.Millisecond
	store := memstore.New()
	cfg.Webhooks = &webhooks.Source{Subscriptions: store, View: func(w *workflow.Workflow) any { return w.ID },
		Bodies: map[string]func(string, *workflow.Workflow) ([]byte, error){workflow.WebhookFormatA2A: a2a.PushBody}}
	e := enginetest.StartEngine(t, cfg, store, model, enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))})
	h := &harness{t: t, store: store, eng: e, gone: new(atomic.Bool)}
	h.a2a, err = a2a.New(a2a.Options{
		Engine: e, Reads: goneReads{e, h.gone}, Actions: enginetest.NewRegistry(), Changes: e.Changes, Idempotency: store,
		Limits: httpapi.Limits{MaxBodyBytes: 64 << 10, MaxPromptChars: 500}, Subscriptions: store, Version: "test",
		CheckPushURL: func(u string) error {
			h.pushes = append(h.pushes, u)
			if strings.Contains(u, "10.0.0.1") {
				return workflow.Errorf(workflow.KindInvalid, "10.0.0.1 is a private address")
			}
			return nil
		},
		Poll: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		h.a2a.ServeHTTP(w, r.WithContext(httpapi.WithUser(r.Context(), user)))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// goneReads are the engine's reads, every Get not found once gone is set.
type goneReads struct {
	*enginetest.Engine
	gone *atomic.Bool
}

func (r goneReads) Get(ctx context.Context, userID, id string) (*workflow.Workflow, error) {
	if r.gone.Load() {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %q not found", id)
	}
	return r.Engine.Get(ctx, userID, id)
}

// rpcAnswer is a JSON-RPC response as the client reads it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// post sends body to /a2a as user and returns the HTTP status and the
// raw answer.
func (h *harness) post(user string, body []byte) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+a2a.RPCPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+user)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// call sends method with params as user and decodes the answer.
func (h *harness) call(user, method string, params any) rpcAnswer {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	_, b := h.post(user, body)
	var a rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		h.t.Fatalf("%s answered %s: %v", method, b, err)
	}
	if a.JSONRPC != "2.0" || string(a.ID) != "7" {
		h.t.Fatalf("%s answered %s: not a JSON-RPC 2.0 response to id 7", method, b)
	}
	return a
}

// task calls method and decodes its result as a task (SendMessage's is
// under "task").
func (h *harness) task(user, method string, params any) a2a.Task {
	h.t.Helper()
	a := h.call(user, method, params)
	if a.Error != nil {
		h.t.Fatalf("%s: error %d %s", method, a.Error.Code, a.Error.Message)
	}
	var t a2a.Task
	raw := a.Result
	if method == "SendMessage" {
		var r struct{ Task json.RawMessage }
		_ = json.Unmarshal(a.Result, &r)
		raw = r.Task
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		h.t.Fatalf("%s result %s: %v", method, a.Result, err)
	}
	return t
}

// errorCode calls method and returns its JSON-RPC error code (0: none).
func (h *harness) errorCode(user, method string, params any) int {
	h.t.Helper()
	if a := h.call(user, method, params); a.Error != nil {
		return a.Error.Code
	}
	return 0
}

// message is a SendMessageRequest of user text.
func message(id, text string, extra map[string]any) map[string]any {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"message": m}
}
