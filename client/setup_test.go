package client_test

import (
	"context"
	"encoding/json"
	"github.com/gin-gonic/gin"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

func init() { gin.SetMode(gin.ReleaseMode) }

const (
	aliceToken = "alice-client-token-0123456789"
	bobToken   = "bob-client-token-01234567890"
)

// gateway is the real engine, actions and HTTP API over the memory store,
// with a model that writes a note (document.generate) and then answers
// "The answer is 42.", each call taking delay.
type gateway struct {
	url    string
	engine *engine.Engine
	close  func()
}

func selection(action, objective string, fields ...string) string {
	specs := []map[string]any{}
	for _, f := range fields {
		specs = append(specs, map[string]any{"name": f, "type": "string", "required": true})
	}
	b, _ := json.Marshal(map[string]any{"action": action, "actionObjective": objective, "learnings": []string{},
		"requiredInputDocuments": []string{}, "requiredConnection": nil, "parametersContext": objective,
		"parametersSchema": map[string]any{"fields": specs}})
	return string(b)
}

func startGateway(delay time.Duration, wrap func(http.Handler) http.Handler) *gateway {
	var stage1 atomic.Int32
	model := &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		time.Sleep(delay)
		prompt := req.Messages[len(req.Messages)-1].Content
		switch req.Stage {
		case workflow.StageOne:
			if stage1.Add(1)%2 == 1 {
				return selection("document.generate", "write the note", "fileName", "content"), nil
			}
			return selection(workflow.CompleteAction, "answer", "message"), nil
		default:
			if strings.Contains(prompt, "write the note") {
				return `{"schema":"parameters_v1","parameters":{"fileName":"note.md","content":"# Note"}}`, nil
			}
			return `{"schema":"parameters_v1","parameters":{"message":"The answer is 42."}}`, nil
		}
	}}
	reg, err := actions.New(actions.Config{}, model)
	if err != nil {
		panic(err)
	}
	set, err := templates.Load("")
	if err != nil {
		panic(err)
	}
	store, changes := memstore.New(), changefeed.New()
	eng, err := engine.New(engine.Config{ShutdownGrace: 50 * time.Millisecond, Changes: changes}, store, model, reg,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))})
	if err != nil {
		panic(err)
	}
	auth, err := httpapi.NewAuthenticator([]httpapi.Credential{{UserID: "alice", Token: aliceToken}, {UserID: "bob", Token: bobToken}}, nil, false, nil)
	if err != nil {
		panic(err)
	}
	api, err := httpapi.New(httpapi.Options{Engine: eng, Reads: eng, Store: store, Actions: reg, Auth: auth, Logger: zerolog.Nop(),
		ModelName: model.Name(), EventPoll: 10 * time.Millisecond, Changes: changes})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	eng.Start(ctx)
	h := api.Routes()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	return &gateway{url: srv.URL, engine: eng, close: func() {
		srv.Close()
		_ = eng.Shutdown(context.Background())
		cancel()
	}}
}
