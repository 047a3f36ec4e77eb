package httpapi

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi/upload"
	"github.com/twostep/twostep/workflow"
)

// TestLargestValidUploadsAccepted: the fullest valid bodies of the upload
// routes — a create with every field, a webhook with all four events and
// the most documents, and a round with onBusy and the most documents —
// pass the body stream's value limit.
func TestLargestValidUploadsAccepted(t *testing.T) {
	t.Parallel()
	const maxDocs = 20
	env := newTestEnv(t, func(o *Options) {
		o.Limits.MaxDocuments = maxDocs
		o.Webhooks = WebhookOptions{CheckURL: func(string) error { return nil }, NewSecret: func() string { return "whsec_dGVzdHNlY3JldA==" }}
	})
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	env.engine.StartFn = func(userID, id string, in engine.NewRound) (*workflow.Workflow, error) {
		return testWorkflow(userID, workflow.StatusRunning), nil
	}
	docs := make([]map[string]any, maxDocs)
	for i := range docs {
		docs[i] = map[string]any{"name": fmt.Sprintf("d%d.txt", i), "mimeType": "text/plain", "content": base64.StdEncoding.EncodeToString([]byte("x"))}
	}
	tests := []struct {
		name, path string
		body       map[string]any
	}{
		{"create", "/api/v1/workflows", map[string]any{
			"prompt": "go", "mode": "react", "maxSteps": 100, "documents": docs,
			"webhook": map[string]any{"url": "https://hooks.example.com/in",
				"events": []string{"round.completed", "round.failed", "round.stopped", "round.awaiting_approval"}},
		}},
		{"round", "/api/v1/workflows/" + idemWorkflowID + "/rounds?onBusy=enqueue", map[string]any{"prompt": "next", "documents": docs}},
	}
	for _, tc := range tests {
		rec := env.do(t, "POST", tc.path, aliceToken, tc.body)
		if rec.Code/100 != 2 {
			t.Errorf("%s: status %d, want it accepted: %s", tc.name, rec.Code, rec.Body)
		}
	}
}

// TestUploadBodyValueLimitsHold derives, from the OpenAPI schema of each
// route whose body the upload stream reads, the most JSON values a valid
// body holds outside its documents and in one document, and checks them
// against bodyValueHeadroom and documentValueLimit: a new body field that
// would push a valid request into the stream's 422 fails here first. A
// field with no bound (an array without maxItems, an open object) fails
// too: it needs a bound before the stream can count it.
func TestUploadBodyValueLimitsHold(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxDocuments = 20 })
	oapi := env.srv.oapi
	reg := oapi.Components.Schemas
	for _, path := range []string{"/api/v1/workflows", "/api/v1/workflows/{id}/rounds"} {
		op := oapi.Paths[path].Post
		if op == nil || op.RequestBody == nil {
			t.Fatalf("%s: no POST body in the OpenAPI document", path)
		}
		body := resolve(reg, op.RequestBody.Content["application/json"].Schema)
		docs, ok := body.Properties["documents"]
		if !ok {
			t.Fatalf("%s: the body has no documents", path)
		}
		top, err := maxJSONValues(reg, body, "documents")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		top += 2 // the documents key and array
		perDoc, err := maxJSONValues(reg, resolve(reg, docs).Items, "")
		if err != nil {
			t.Fatalf("%s documents: %v", path, err)
		}
		t.Logf("%s: at most %d values outside the documents, %d per document", path, top, perDoc)
		headroom, perDocLimit := upload.ValueLimit(0), upload.ValueLimit(1)-upload.ValueLimit(0)
		if top > headroom || perDoc > perDocLimit {
			t.Errorf("%s: a valid body holds up to %d values outside its documents (headroom %d) and %d per document (limit %d)",
				path, top, headroom, perDoc, perDocLimit)
		}
	}
}

func resolve(reg huma.Registry, s *huma.Schema) *huma.Schema {
	for s != nil && s.Ref != "" {
		s = reg.SchemaFromRef(s.Ref)
	}
	return s
}

// maxJSONValues is the most JSON values (object keys included) a valid
// instance of s holds, leaving out the property named skip.
func maxJSONValues(reg huma.Registry, s *huma.Schema, skip string) (int, error) {
	s = resolve(reg, s)
	if s == nil {
		return 1, nil
	}
	switch s.Type {
	case huma.TypeObject:
		if ap, ok := s.AdditionalProperties.(bool); s.AdditionalProperties != nil && (!ok || ap) {
			return 0, fmt.Errorf("an open object (additionalProperties) has no bound")
		}
		n := 1
		for name, p := range s.Properties {
			if name == skip {
				continue
			}
			v, err := maxJSONValues(reg, p, "")
			if err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			n += 1 + v
		}
		return n, nil
	case huma.TypeArray:
		if s.MaxItems == nil {
			return 0, fmt.Errorf("an array without maxItems has no bound")
		}
		v, err := maxJSONValues(reg, s.Items, "")
		if err != nil {
			return 0, fmt.Errorf("items: %w", err)
		}
		return 1 + *s.MaxItems*v, nil
	case "":
		if len(s.Properties) > 0 || s.Items != nil || len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) > 0 {
			return 0, fmt.Errorf("a schema without a type has no bound")
		}
	}
	return 1, nil
}
