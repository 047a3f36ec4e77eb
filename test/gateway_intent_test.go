package test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// ticketLLM is an OpenAI-compatible model server for intent approvals. The
// first word of the user request is a tag; for each tag, Stage 1 answers
// its script of actions in order ("ticket" selects tickets.create, asking
// for title and priority; anything else, or the script's end,
// workflow.complete), and Stage 2 fills tickets.create with the tag's
// script of priorities in order (the last one repeated). It keeps every
// Stage 2 request body, by tag.
type ticketLLM struct {
	mu         sync.Mutex
	selects    map[string][]string
	priorities map[string][]int
	stage1     map[string]int
	stage2     map[string][]string
}

func newTicketLLM(t *testing.T) (*ticketLLM, string) {
	m := &ticketLLM{selects: map[string][]string{}, priorities: map[string][]int{}, stage1: map[string]int{}, stage2: map[string][]string{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL + "/v1"
}

// script sets tag's Stage 1 actions and Stage 2 priorities.
func (m *ticketLLM) script(tag string, selects []string, priorities ...int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.selects[tag], m.priorities[tag] = selects, priorities
}

// stage2Calls returns the bodies of the Stage 2 calls made for tag's
// tickets.create steps.
func (m *ticketLLM) stage2Calls(tag string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.stage2[tag]...)
}

var ticketKey = regexp.MustCompile(`ticket key=(\S+)`)

func (m *ticketLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var all strings.Builder
	for _, msg := range req.Messages {
		all.WriteString(contentText(msg.Content) + "\n")
	}
	prompt := all.String()
	m.mu.Lock()
	var reply any
	switch {
	case strings.Contains(prompt, "You are the planner"):
		tag := ""
		if mm := scriptRequest.FindStringSubmatch(prompt); mm != nil {
			tag = mm[1]
		}
		i := m.stage1[tag]
		m.stage1[tag]++
		sel := map[string]any{"learnings": []string{}, "requiredInputDocuments": []string{}, "requiredConnection": nil}
		if i < len(m.selects[tag]) && m.selects[tag][i] == "ticket" {
			sel["action"], sel["actionObjective"] = "tickets.create", "open a ticket for the outage"
			sel["parametersContext"] = "ticket key=" + tag + " about the outage"
			sel["parametersSchema"] = map[string]any{"fields": []any{
				map[string]any{"name": "title", "type": "string", "required": true},
				map[string]any{"name": "priority", "type": "number", "required": true}}}
		} else {
			sel["action"], sel["actionObjective"] = "workflow.complete", "answer the user"
			sel["parametersContext"] = "say done"
			sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message", "type": "string", "required": true}}}
		}
		reply = sel
	case ticketKey.MatchString(prompt):
		tag := ticketKey.FindStringSubmatch(prompt)[1]
		script := m.priorities[tag]
		n := len(m.stage2[tag])
		m.stage2[tag] = append(m.stage2[tag], string(raw))
		priority := 3
		if len(script) > 0 {
			priority = script[min(n, len(script)-1)]
		}
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"title": "outage " + tag, "priority": priority}}
	default:
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"message": "done"}}
	}
	m.mu.Unlock()
	content, _ := json.Marshal(reply)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-ticket", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// ticketService counts the tickets created, by title, with their priorities.
type ticketService struct {
	mu      sync.Mutex
	created map[string][]float64
}

func newTicketService(t *testing.T) (*ticketService, string) {
	s := &ticketService{created: map[string][]float64{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Title    string
			Priority float64
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		s.created[body.Title] = append(s.created[body.Title], body.Priority)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"text": "ticket created"}`))
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// of returns the priorities of the tickets created for tag.
func (s *ticketService) of(tag string) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.created["outage "+tag]...)
}

// intentGateways starts the gateways of an intent approval test on store
// ("memory": one gateway; "redis": an API-only instance, which takes every
// request and decision, and a worker, which runs every round) and returns
// the API one. extraYAML is added to the configuration.
func intentGateways(t *testing.T, store, extraYAML string) (*gateway, *ticketLLM, *ticketService) {
	model, modelURL := newTicketLLM(t)
	tickets, ticketsURL := newTicketService(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := extraYAML + "approvals:\n  actions:\n    tickets.create: intent\n" +
		"httpActions:\n  - name: tickets.create\n    description: Create a ticket\n    url: " + ticketsURL + "/tickets\n" +
		"    body: parameters\n    effect: write\n    documents: none\n" +
		"    parameters: {type: object, required: [title, priority], properties: {title: {type: string}, priority: {type: integer, minimum: 1, maximum: 5}}}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + modelURL, "GATEWAY_CONFIG=" + cfg}
	if store == "memory" {
		return startGateway(t, nil, env...), model, tickets
	}
	env = append(env, "REDIS_URL="+redisURL(t))
	api := startGatewayWith(t, nil, []string{"serve", "--workers=0"}, env...)
	startGatewayWith(t, nil, []string{"worker"}, env...)
	return api, model, tickets
}

// intentStores are the stores an intent test runs on: memory always,
// Redis (two instances) with REDIS_URL.
func intentStores() []string {
	if os.Getenv("REDIS_URL") != "" || os.Getenv("CI") != "" {
		return []string{"memory", "redis"}
	}
	return []string{"memory"}
}

// pausedIntent creates a workflow for tag and waits for it to pause; it
// checks the pause is an intent approval of tickets.create showing what
// Stage 2 will be given and no parameters, and that nothing was sent.
func pausedIntent(t *testing.T, g *gateway, model *ticketLLM, tickets *ticketService, tag string) (wfView, *client.PendingApproval) {
	t.Helper()
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": tag + " open a ticket"}, &wf)
	evs := g.events(t, gwAlice, wf.ID, 0)
	if last := evs[len(evs)-1]; last.Type != "approval" || last.Approval == nil || last.Approval.Kind != "intent" {
		t.Fatalf("the events stream does not end with an intent approval: %+v", last)
	}
	status, _, body := g.send(t, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"kind":"intent"`) || !strings.Contains(string(body), `"parameters":null`) {
		t.Errorf("paused workflow = %d %s, want an intent approval whose parameters are null", status, body)
	}
	g.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &wf)
	p := wf.PendingApproval
	if wf.Status != "awaiting_approval" || p == nil || p.Kind != "intent" || p.Action != "tickets.create" ||
		p.ActionObjective == "" || p.Parameters != nil || !strings.Contains(p.ParametersContext, "ticket key="+tag) ||
		len(p.Fields) != 2 || p.Fields[1].Name != "priority" {
		t.Fatalf("paused workflow = %s, pending approval %+v", wf.Status, p)
	}
	if n := len(model.stage2Calls(tag)); n != 0 {
		t.Errorf("Stage 2 ran %d times before the intent was approved", n)
	}
	if got := tickets.of(tag); len(got) != 0 {
		t.Errorf("tickets created before any decision: %v", got)
	}
	return wf, p
}

// TestIntentApprovalNarrowsStage2: an intent pause shows no parameters and
// sends nothing; constraints that do not compile or name a field Stage 2
// does not fill are refused with 422 and the approval stays pending;
// approved with {priority: {maximum: 2}}, Stage 2 is sent the narrowed
// schema, its reply with priority 5 is rejected with feedback naming the
// constraint, and the retry with 2 runs once, without a second pause. On
// Redis the decision goes to an API-only instance and a worker runs it.
func TestIntentApprovalNarrowsStage2(t *testing.T) {
	t.Parallel()
	for _, store := range intentStores() {
		t.Run(store, func(t *testing.T) {
			g, model, tickets := intentGateways(t, store, "")
			model.script("narrow", []string{"ticket"}, 5, 2)
			wf, p := pausedIntent(t, g, model, tickets, "narrow")
			decide := "/api/v1/workflows/" + wf.ID + "/approvals/" + p.ID
			for _, bad := range []map[string]any{
				{"decision": "approve", "constraints": map[string]any{"assignee": map[string]any{"const": "me"}}},
				{"decision": "approve", "constraints": map[string]any{"priority": map[string]any{"maximum": "two"}}},
				{"decision": "approve", "parameters": map[string]any{"title": "x", "priority": 1}},
				{"decision": "reject", "constraints": map[string]any{"priority": map[string]any{"maximum": 2}}},
			} {
				if status, _, body := g.send(t, "POST", decide, gwAlice, bad); status != http.StatusUnprocessableEntity {
					t.Errorf("decision %v answered %d %s, want 422", bad, status, body)
				}
			}
			var still wfView
			if g.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &still); still.PendingApproval == nil || still.PendingApproval.ID != p.ID {
				t.Fatalf("after refused decisions: %s, %+v; want the same approval pending", still.Status, still.PendingApproval)
			}
			g.expect(t, http.StatusAccepted, "POST", decide, gwAlice, map[string]any{"decision": "approve",
				"constraints": map[string]any{"priority": map[string]any{"maximum": 2}}}, nil)
			if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
				t.Fatalf("workflow ended %s (%s), want completed without a second pause", done.Status, done.Error)
			}
			if got := tickets.of("narrow"); len(got) != 1 || got[0] != 2 {
				t.Errorf("tickets created = %v, want exactly one, with priority 2", got)
			}
			calls := model.stage2Calls("narrow")
			if len(calls) != 2 {
				t.Fatalf("Stage 2 calls = %d, want 2 (priority 5 rejected, 2 accepted)", len(calls))
			}
			if !strings.Contains(calls[0], `\"maximum\":2`) && !strings.Contains(calls[0], `"maximum":2`) {
				t.Errorf("the first Stage 2 call was not sent the narrowed schema (maximum 2):\n%s", calls[0])
			}
			if !strings.Contains(calls[1], "priority") || !strings.Contains(calls[1], "approved constraint") {
				t.Errorf("the retry's feedback does not name the constraint:\n%s", calls[1])
			}
		})
	}
}

// TestIntentApprovalRejectAndExpire: a rejected intent never reaches Stage 2
// nor the ticket service and the next Stage 1 sees the rejection; an
// undecided one expires (limits.approvalTimeout 2s) the same way.
func TestIntentApprovalRejectAndExpire(t *testing.T) {
	t.Parallel()
	for _, store := range intentStores() {
		t.Run(store, func(t *testing.T) {
			g, model, tickets := intentGateways(t, store, "limits:\n  approvalTimeout: 2s\n")
			model.script("rejected", []string{"ticket"})
			wf, p := pausedIntent(t, g, model, tickets, "rejected")
			g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice,
				map[string]any{"decision": "reject", "comment": "not today"}, nil)
			if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
				t.Fatalf("workflow ended %s (%s), want completed after the rejected step", done.Status, done.Error)
			}
			rejected := 0
			for _, m := range g.messages(t, gwAlice, wf.ID) {
				if m.Status == "rejected" && strings.Contains(m.Summary, "not today") && m.Action == "tickets.create" {
					rejected++
				}
			}
			if rejected != 1 || len(model.stage2Calls("rejected")) != 0 || len(tickets.of("rejected")) != 0 {
				t.Errorf("rejected messages %d, Stage 2 calls %d, tickets %v; want 1, 0, none",
					rejected, len(model.stage2Calls("rejected")), tickets.of("rejected"))
			}

			model.script("expired", []string{"ticket"})
			wf, p = pausedIntent(t, g, model, tickets, "expired")
			for deadline := p.ExpiresAt.Add(15 * time.Second); wf.Status == "awaiting_approval" && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				g.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &wf)
			}
			if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
				t.Fatalf("workflow ended %s (%s), want completed after the expired step", done.Status, done.Error)
			}
			expired := 0
			for _, m := range g.messages(t, gwAlice, wf.ID) {
				if m.Status == "rejected" && strings.Contains(m.Summary, "expired") {
					expired++
				}
			}
			if expired != 1 || len(model.stage2Calls("expired")) != 0 || len(tickets.of("expired")) != 0 {
				t.Errorf("expired messages %d, Stage 2 calls %d, tickets %v; want 1, 0, none",
					expired, len(model.stage2Calls("expired")), tickets.of("expired"))
			}
			if status, _, body := g.send(t, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice, map[string]any{"decision": "approve"}); status != http.StatusConflict {
				t.Errorf("a decision after expiry answered %d %s, want 409", status, body)
			}
		})
	}
}

// TestStandingApprovalScopeWorkflow: an intent approved with constraints
// and remember {scope: workflow} lets the workflow's next matching call
// run without a pause, recorded with approvedBy; a call outside the
// constraints pauses (kind call, with its parameters); bob neither sees
// nor revokes alice's standing approval; once alice revokes it, the next
// step pauses for the intent again. On Redis the decisions go to an
// API-only instance and a worker runs the steps.
func TestStandingApprovalScopeWorkflow(t *testing.T) {
	t.Parallel()
	for _, store := range intentStores() {
		t.Run(store, func(t *testing.T) {
			g, model, tickets := intentGateways(t, store, "")
			model.script("standing", []string{"ticket", "ticket", "ticket"}, 2, 1, 5)
			wf, p := pausedIntent(t, g, model, tickets, "standing")
			g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice, map[string]any{
				"decision": "approve", "constraints": map[string]any{"priority": map[string]any{"maximum": 2}},
				"remember": map[string]any{"scope": "workflow", "ttl": "1h"}}, nil)
			wf = g.waitDone(t, gwAlice, wf.ID)
			call := wf.PendingApproval
			if wf.Status != "awaiting_approval" || call == nil || call.Kind != "call" || call.Parameters["priority"] != 5.0 || call.Step != 3 {
				t.Fatalf("workflow = %s, pending %+v; want step 3 (priority 5) paused as a call", wf.Status, call)
			}
			if got := tickets.of("standing"); len(got) != 2 || got[0] != 2 || got[1] != 1 {
				t.Errorf("tickets = %v, want [2 1]: the approved one and the one the standing approval admitted", got)
			}
			var list struct{ Approvals []client.StandingApproval }
			g.expect(t, http.StatusOK, "GET", "/api/v1/approvals/standing", gwAlice, nil, &list)
			if len(list.Approvals) != 1 {
				t.Fatalf("standing approvals = %+v, want one", list.Approvals)
			}
			sa := list.Approvals[0]
			if sa.Action != "tickets.create" || sa.Kind != "intent" || sa.Scope != "workflow" || sa.WorkflowID != wf.ID ||
				sa.GrantedBy != "alice" || sa.Uses != 1 || sa.ExpiresAt == nil || sa.Constraints["priority"]["maximum"] != 2.0 {
				t.Errorf("standing approval = %+v", sa)
			}
			var auto []msgView
			for _, m := range g.messages(t, gwAlice, wf.ID) {
				if m.Role == "action" && m.ApprovedBy != nil {
					auto = append(auto, m)
				}
			}
			if len(auto) != 1 || auto[0].Step != 2 || auto[0].ApprovedBy.StandingApprovalID != sa.ID || auto[0].ApprovedBy.GrantedBy != "alice" {
				t.Errorf("messages approved by a standing approval = %+v, want step 2's, naming %s and alice", auto, sa.ID)
			}
			var bobs struct{ Approvals []client.StandingApproval }
			if g.expect(t, http.StatusOK, "GET", "/api/v1/approvals/standing", gwBob, nil, &bobs); len(bobs.Approvals) != 0 {
				t.Errorf("bob sees %+v", bobs.Approvals)
			}
			if status, _, _ := g.send(t, "DELETE", "/api/v1/approvals/standing/"+sa.ID, gwBob, nil); status != http.StatusNotFound {
				t.Errorf("bob's revocation answered %d, want 404", status)
			}
			// Reject the call outside the constraints; the round completes.
			g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+call.ID, gwAlice, map[string]any{"decision": "reject"}, nil)
			if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
				t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
			}
			if status, _, body := g.send(t, "DELETE", "/api/v1/approvals/standing/"+sa.ID, gwAlice, nil); status != http.StatusNoContent {
				t.Fatalf("revocation answered %d %s, want 204", status, body)
			}
			model.script("again", []string{"ticket"}, 1)
			g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice, map[string]any{"prompt": "again one more"}, nil)
			wf = g.waitDone(t, gwAlice, wf.ID)
			if wf.Status != "awaiting_approval" || wf.PendingApproval == nil || wf.PendingApproval.Kind != "intent" {
				t.Fatalf("after revocation: %s, pending %+v; want an intent pause", wf.Status, wf.PendingApproval)
			}
			if got := tickets.of("again"); len(got) != 0 {
				t.Errorf("a revoked standing approval still let a ticket through: %v", got)
			}
		})
	}
}

// TestCLIIntentApproval: twostep run names an intent approval with its
// kind and the fields Stage 2 will fill; approve --constraints --remember
// runs the step within them; standing lists the standing approval and
// revoke deletes it.
func TestCLIIntentApproval(t *testing.T) {
	t.Parallel()
	g, model, tickets := intentGateways(t, "memory", "")
	model.script("cli", []string{"ticket"}, 4, 1)
	_, errOut, code := cli(t, g, gwAlice, "run", "cli open a ticket")
	m := regexp.MustCompile(`twostep approve (wf_\w+) (apr_\w+)`).FindStringSubmatch(errOut)
	if code != 3 || m == nil || !strings.Contains(errOut, "(intent): tickets.create") || !strings.Contains(errOut, "Stage 2 will fill: title, priority") {
		t.Fatalf("paused run: exit %d, stderr:\n%s", code, errOut)
	}
	out, errOut, code := cli(t, g, gwAlice, "approve", m[1], m[2], "--constraints", `{"priority":{"maximum":1}}`, "--remember", "user", "--ttl", "2h")
	if code != 0 || out != "done\n" {
		t.Errorf("approve: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if got := tickets.of("cli"); len(got) != 1 || got[0] != 1 {
		t.Errorf("tickets = %v, want one with priority 1", got)
	}
	// The standing approval (scope user) admits the next workflow's call
	// within the constraints; show says who granted it.
	model.script("cli2", []string{"ticket"}, 1)
	out, errOut, code = cli(t, g, gwAlice, "run", "cli2 open a ticket")
	second := regexp.MustCompile(`twostep: (wf_\w+) round 1 completed`).FindStringSubmatch(errOut)
	if code != 0 || out != "done\n" || second == nil {
		t.Fatalf("a run within the standing approval: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if out, _, _ = cli(t, g, gwAlice, "show", second[1]); !regexp.MustCompile(`approved by standing approval sap_\w+, granted by alice`).MatchString(out) {
		t.Errorf("show does not say who approved the call:\n%s", out)
	}
	out, errOut, code = cli(t, g, gwAlice, "standing")
	id := regexp.MustCompile(`^(sap_\w+)  tickets.create intent \(user\) \{"priority":\{"maximum":1\}\}, granted by alice, until \S+, 1 use\n$`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		t.Fatalf("standing: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code = cli(t, g, gwAlice, "revoke", id[1]); code != 0 || out != "revoked "+id[1]+"\n" {
		t.Errorf("revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, _, code = cli(t, g, gwAlice, "standing"); code != 0 || out != "" {
		t.Errorf("standing after revoke: exit %d, stdout %q", code, out)
	}
	if _, errOut, code = cli(t, g, gwAlice, "revoke", id[1]); code != 1 || !strings.Contains(errOut, "404") {
		t.Errorf("revoke twice: exit %d, stderr %q; want 1 with the 404", code, errOut)
	}
}
