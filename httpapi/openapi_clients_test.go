package httpapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// jsonSchema is the part of a JSON Schema the document rules look at.
type jsonSchema struct {
	Ref        string                 `json:"$ref"`
	Type       any                    `json:"type"`
	Enum       []any                  `json:"enum"`
	Items      *jsonSchema            `json:"items"`
	Properties map[string]*jsonSchema `json:"properties"`
	OneOf      []*jsonSchema          `json:"oneOf"`
}

type jsonDoc struct {
	Tags       []struct{ Name string } `json:"tags"`
	Components struct {
		Schemas map[string]*jsonSchema `json:"schemas"`
	} `json:"components"`
	Paths map[string]map[string]struct {
		OperationID string                        `json:"operationId"`
		Description string                        `json:"description"`
		Tags        []string                      `json:"tags"`
		Parameters  []struct{ Schema jsonSchema } `json:"parameters"`
		Responses   map[string]struct {
			Headers map[string]any `json:"headers"`
			Content map[string]struct {
				Schema *jsonSchema `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
}

func servedDoc(t *testing.T) jsonDoc {
	t.Helper()
	f := newAdminFixture(t, memstore.New())
	var doc jsonDoc
	if err := json.Unmarshal(f.env.do(t, "GET", "/openapi.json", "", nil).Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIForGeneratedClients checks the rules that make the document
// good input for client generators and linters (openapi_clients.go).
func TestOpenAPIForGeneratedClients(t *testing.T) {
	t.Parallel()
	doc := servedDoc(t)
	schemas := doc.Components.Schemas

	t.Run("response arrays are not nullable", func(t *testing.T) {
		for _, name := range []string{"MessageList", "MessageView", "WorkflowList", "AdminWorkflowList", "ActionList",
			"TraceList", "TraceView", "TemplateList", "TemplateView", "PendingApproval", "Selection", "ParametersSchema",
			"WorkflowResult", "ErrorModel", "RenderResult", "CheckpointView"} {
			s := schemas[name]
			if s == nil {
				t.Errorf("no schema %s", name)
				continue
			}
			for prop, p := range s.Properties {
				if list, ok := p.Type.([]any); ok && slices.Contains(list, "array") {
					t.Errorf("%s.%s is typed %v: the server always sends an array", name, prop, list)
				}
			}
		}
	})
	t.Run("one schema per enum", func(t *testing.T) {
		for _, e := range namedEnums() {
			if s := schemas[e.name]; s == nil || len(s.Enum) != len(e.values) {
				t.Errorf("component %s is %+v, want the enum %q", e.name, s, e.values)
			}
			for _, use := range e.props {
				name, prop, _ := strings.Cut(use, ".")
				if p := schemas[name].Properties[prop]; p == nil || p.Ref != "#/components/schemas/"+e.name {
					t.Errorf("%s is %+v, want a $ref to %s", use, p, e.name)
				}
			}
			for name, s := range schemas {
				if name == e.name || strings.HasSuffix(name, "Body") {
					continue // request bodies keep their inline enums
				}
				for prop, p := range s.Properties {
					if sameEnum(p.Enum, e.values) {
						t.Errorf("%s.%s repeats %s inline", name, prop, e.name)
					}
				}
			}
		}
	})
	t.Run("operations are described and tagged", func(t *testing.T) {
		declared := map[string]bool{}
		for _, tag := range doc.Tags {
			declared[tag.Name] = true
		}
		for path, ops := range doc.Paths {
			for method, op := range ops {
				if op.Description == "" {
					t.Errorf("%s %s has no description", method, path)
				}
				for _, tag := range op.Tags {
					if !declared[tag] {
						t.Errorf("%s %s: tag %q is not in the global tags", method, path, tag)
					}
				}
			}
		}
	})
	t.Run("no recursive schema", func(t *testing.T) {
		for name := range schemas {
			if cycle := refCycle(schemas, name, nil); cycle != nil {
				t.Errorf("schema cycle %v", cycle)
			}
		}
	})
	t.Run("download is binary, create has Location", func(t *testing.T) {
		dl := doc.Paths["/api/v1/workflows/{id}/documents/{docId}"]["get"].Responses["200"].Content["application/octet-stream"].Schema
		if dl == nil || dl.Type != "string" {
			t.Errorf("download 200 application/octet-stream schema = %+v", dl)
		}
		if _, ok := doc.Paths["/api/v1/workflows"]["post"].Responses["201"].Headers["Location"]; !ok {
			t.Error("createWorkflow 201 declares no Location header")
		}
	})
	t.Run("event stream payloads are typed", func(t *testing.T) {
		s := doc.Paths["/api/v1/workflows/{id}/events"]["get"].Responses["200"].Content["text/event-stream"].Schema
		if s == nil || s.Items == nil || len(s.Items.OneOf) == 0 {
			t.Fatalf("event stream schema = %+v", s)
		}
		var data []string
		for _, ev := range s.Items.OneOf {
			data = append(data, ev.Properties["data"].Ref)
		}
		if !slices.Contains(data, "#/components/schemas/MessageView") || !slices.Contains(data, "#/components/schemas/WorkflowView") {
			t.Errorf("event data schemas %v lack MessageView or WorkflowView", data)
		}
	})
}

// refCycle returns the chain of schema names from name back to one already
// on path, or nil when name's references end.
func refCycle(schemas map[string]*jsonSchema, name string, path []string) []string {
	if slices.Contains(path, name) {
		return append(path, name)
	}
	path = append(path, name)
	var walk func(s *jsonSchema) []string
	walk = func(s *jsonSchema) []string {
		if s == nil {
			return nil
		}
		if ref, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
			return refCycle(schemas, ref, path)
		}
		if c := walk(s.Items); c != nil {
			return c
		}
		for _, p := range s.Properties {
			if c := walk(p); c != nil {
				return c
			}
		}
		for _, o := range s.OneOf {
			if c := walk(o); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(schemas[name])
}

// TestViewsSendArrays: the views fill every array the document declares
// non-nullable, whatever the stored record holds.
func TestViewsSendArrays(t *testing.T) {
	t.Parallel()
	w := testWorkflow("alice", workflow.StatusAwaitingApproval)
	w.PendingApproval = &workflow.PendingApproval{ID: "ap_1", Action: "document.generate"}
	w.Checkpoint = &workflow.Checkpoint{Phase: workflow.PhaseExecute, Selection: &workflow.Selection{Action: "x"},
		AfterReject: &workflow.Checkpoint{Phase: workflow.PhaseSelect, Selection: &workflow.Selection{}}}
	got, err := json.Marshal(adminView(w))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"documents":[]`, `"parameters":{}`, `"learnings":[]`, `"requiredInputDocuments":[]`, `"fields":[]`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("admin view lacks %s: %s", want, got)
		}
	}
	if strings.Contains(string(got), "null") {
		t.Errorf("admin view sends null: %s", got)
	}
	if strings.Count(string(got), `"afterReject"`) != 1 {
		t.Errorf("admin view should nest afterReject once: %s", got)
	}
}

// TestProblemsCarryRequiredFields: every problem, from huma or from the gin
// middleware, sends the fields the document declares required.
func TestProblemsCarryRequiredFields(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	env.engine.GetFn = func(_, id string) (*workflow.Workflow, error) { return nil, workflow.NoWorkflow(id) }
	for _, c := range []struct{ name, method, path, token string }{
		{"huma 404", "GET", "/api/v1/workflows/wf_00000000000000000000000000", aliceToken},
		{"huma 422", "GET", "/api/v1/workflows?limit=0", aliceToken},
		{"middleware 401", "GET", "/api/v1/workflows", ""},
		{"no route", "GET", "/nowhere", aliceToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := env.do(t, c.method, c.path, c.token, nil)
			var p map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"type", "title", "status", "detail"} {
				if v, ok := p[k]; !ok || v == "" {
					t.Errorf("problem lacks %s: %s", k, rec.Body)
				}
			}
		})
	}
}

// TestDecisionOverLimitSaysSo: huma's own 413 on the decision route (a
// fixed 1 MiB) is reworded to say what to change.
func TestDecisionOverLimitSaysSo(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	body := `{"decision":"approve","comment":"` + strings.Repeat("x", 1<<20) + `"}`
	rec := env.do(t, "POST", "/api/v1/workflows/wf_00000000000000000000000000/approvals/apr_x", aliceToken, body)
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "larger than this route's limit of 1048576 bytes: send a smaller body") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}
