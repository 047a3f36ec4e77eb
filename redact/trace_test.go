package redact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

func TestRedactorString(t *testing.T) {
	t.Parallel()
	r := redact.New("sk-live-123456", "sk-live-123456-extended", `pa"ss<word>&1`, "", "  padded-secret  ")
	tests := []struct {
		name, in, want string
	}{
		{"plain", "key=sk-live-123456.", "key=[REDACTED]."},
		{"longest first", "sk-live-123456-extended", "[REDACTED]"},
		{"twice", "sk-live-123456 sk-live-123456", "[REDACTED] [REDACTED]"},
		{"json quoted", `{"k":"pa\"ss<word>&1"}`, `{"k":"[REDACTED]"}`},
		{"json html escaped", `{"k":"pa\"ss\u003cword\u003e\u00261"}`, `{"k":"[REDACTED]"}`},
		{"raw with quote", `pa"ss<word>&1`, `[REDACTED]`},
		{"trimmed secret", "x padded-secret y", "x [REDACTED] y"},
		{"nothing secret", "hello", "hello"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	t.Run("nil redacts nothing", func(t *testing.T) {
		var nilR *redact.Redactor
		if got := nilR.String("sk-live-123456"); got != "sk-live-123456" {
			t.Errorf("nil Redactor changed the text: %q", got)
		}
		if got := redact.New().String("sk-live-123456"); got != "sk-live-123456" {
			t.Errorf("empty Redactor changed the text: %q", got)
		}
	})
}

func TestRedactorTraceKeepsJSONValid(t *testing.T) {
	t.Parallel()
	secret := `tok<"&>-0123456789`
	quoted, _ := json.Marshal(secret)
	in := workflow.Trace{
		ID: "tr_1", Prompt: []workflow.PromptMessage{{Role: "user", Content: "use " + secret}},
		Response: `{"a":` + string(quoted) + `}`, Parsed: json.RawMessage(`{"a":` + string(quoted) + `}`),
		Error: "bad " + secret, Model: "m", Inputs: map[string]string{"USER_PROMPT": "use " + secret, "OTHER": "plain"},
		Ungrounded: []string{"ticketId", "x." + secret},
	}
	got := redact.New(secret).Trace(in)
	want := workflow.Trace{
		ID: "tr_1", Prompt: []workflow.PromptMessage{{Role: "user", Content: "use [REDACTED]"}},
		Response: `{"a":"[REDACTED]"}`, Parsed: json.RawMessage(`{"a":"[REDACTED]"}`), Error: "bad [REDACTED]", Model: "m",
		Inputs:     map[string]string{"USER_PROMPT": "use [REDACTED]", "OTHER": "plain"},
		Ungrounded: []string{"ticketId", "x.[REDACTED]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Trace (-want +got):\n%s", diff)
	}
	if !json.Valid(got.Parsed) {
		t.Errorf("redacted Parsed is not JSON: %s", got.Parsed)
	}
	if in.Prompt[0].Content != "use "+secret || in.Inputs["USER_PROMPT"] != "use "+secret || in.Ungrounded[1] != "x."+secret {
		t.Errorf("Trace changed its argument's prompt")
	}
}

// TestRedactTracesDecorator: the decorated store keeps redacted traces and
// passes everything else through, cap included.
func TestRedactTracesDecorator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := memstore.New(memstore.WithTraceCap(2))
	store := redact.Traces(raw, redact.New("secret-value-42"))
	wf := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusCompleted, MaxSteps: 3, CreatedAt: time.Now(), UpdatedAt: time.Now(),
	}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		tr := workflow.Trace{
			ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Stage: workflow.StageOne, Attempt: i + 1,
			Prompt: []workflow.PromptMessage{{Role: "user", Content: "secret-value-42"}}, Response: "secret-value-42!",
		}
		ids = append(ids, tr.ID)
		if err := store.AppendTrace(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := raw.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || kept[0].ID != ids[1] {
		t.Fatalf("kept %d traces starting %v, want the newest 2 (the wrapped store's cap)", len(kept), kept)
	}
	for _, tr := range kept {
		if tr.Prompt[0].Content != redact.Redacted || tr.Response != redact.Redacted+"!" {
			t.Errorf("stored trace not redacted: %+v", tr)
		}
	}
	if _, err := store.GetWorkflow(ctx, wf.ID); err != nil {
		t.Errorf("GetWorkflow through the decorator: %v", err)
	}
}

// TestRedactTracesDecoratorCommit: traces carried by a commit are stored
// redacted too, and the caller's traces are left as they were.
func TestRedactTracesDecoratorCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := memstore.New()
	store := redact.Traces(raw, redact.New("secret-value-42"))
	wf := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, MaxSteps: 3, CreatedAt: time.Now(), UpdatedAt: time.Now(),
	}
	stored, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	traces := []workflow.Trace{{
		ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Stage: workflow.StageOne, Attempt: 1,
		Prompt:   []workflow.PromptMessage{{Role: "user", Content: "key secret-value-42"}},
		Response: `{"k":"secret-value-42"}`, Parsed: json.RawMessage(`{"k":"secret-value-42"}`), Error: "bad secret-value-42",
	}}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: stored, ExpectedVersion: stored.Version, Traces: traces}); err != nil {
		t.Fatal(err)
	}
	kept, err := raw.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []workflow.Trace{traces[0]}
	want[0].Prompt = []workflow.PromptMessage{{Role: "user", Content: "key " + redact.Redacted}}
	want[0].Response = `{"k":"` + redact.Redacted + `"}`
	want[0].Parsed = json.RawMessage(`{"k":"` + redact.Redacted + `"}`)
	want[0].Error = "bad " + redact.Redacted
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("stored traces (-want +got):\n%s", diff)
	}
	if traces[0].Response != `{"k":"secret-value-42"}` || traces[0].Prompt[0].Content != "key secret-value-42" {
		t.Errorf("Commit changed the caller's trace: %+v", traces[0])
	}
}

func BenchmarkRedactorTrace(b *testing.B) {
	secrets := make([]string, 20)
	for i := range secrets {
		secrets[i] = "secret-" + strings.Repeat("x", i) + "-value"
	}
	r := redact.New(secrets...)
	prompt := strings.Repeat("a typical prompt line with no secret in it at all\n", 400) // ~20 kB
	tr := workflow.Trace{Prompt: []workflow.PromptMessage{{Role: "system", Content: prompt}, {Role: "user", Content: prompt}},
		Response: `{"action":"document.generate"}`, Parsed: json.RawMessage(`{"action":"document.generate"}`)}
	b.SetBytes(int64(2 * len(prompt)))
	b.ReportAllocs()
	for b.Loop() {
		r.Trace(tr)
	}
}

// BenchmarkRedactorTraceOneSecret: a Stage 1 trace as the benchmark task
// writes it (one model key configured, a 6 kB prompt, no secret in it).
func BenchmarkRedactorTraceOneSecret(b *testing.B) {
	r := redact.New("sk-bench-0123456789abcdef")
	prompt := strings.Repeat("## Step 3 — echo.say {\"text\":\"call 3\"} → success: call 3\n", 100)
	tr := workflow.Trace{Prompt: []workflow.PromptMessage{{Role: "system", Content: prompt}, {Role: "user", Content: "go"}},
		Response: `{"action":"echo.say","objective":"say it"}`, Parsed: json.RawMessage(`{"action":"echo.say","objective":"say it"}`)}
	b.SetBytes(int64(len(prompt)))
	b.ReportAllocs()
	for b.Loop() {
		r.Trace(tr)
	}
}

// roundLoader is a store with workflow.RoundLoader, counting its calls.
type roundLoader struct {
	workflow.Store
	calls int
}

func (l *roundLoader) ClaimRoundLoad(ctx context.Context, id, owner string, ttl time.Duration) (workflow.RoundClaim, error) {
	l.calls++
	return workflow.ClaimRoundLoad(ctx, l.Store, id, owner, ttl)
}

// TestRedactTracesDecoratorClaimRoundLoad: the decorator hands the claim
// that starts a run to the wrapped store's RoundLoader (one round trip on
// Redis), which embedding alone would hide.
func TestRedactTracesDecoratorClaimRoundLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := &roundLoader{Store: memstore.New()}
	store := redact.Traces(raw, redact.New("secret-value-42"))
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, MaxSteps: 3}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	c, err := workflow.ClaimRoundLoad(ctx, store, wf.ID, "a", time.Minute)
	if err != nil || c.Fence != 1 || c.Workflow == nil || c.Workflow.ID != wf.ID {
		t.Fatalf("ClaimRoundLoad through the decorator = %d, %v, %v; want fence 1 and the workflow", c.Fence, c.Workflow, err)
	}
	if raw.calls != 1 {
		t.Errorf("the wrapped store's ClaimRoundLoad ran %d times, want 1", raw.calls)
	}
}

// BenchmarkRedactorTraceStep100: a Stage 1 trace of a long round's late
// step (testdata/stage1_step100.txt: the bench task's prompt with the
// history of steps 100 down to 45, about 20 kB, as the history budget
// leaves it; no secret in it) with the bench gateway's one model key, and
// with 20 secrets of assorted shapes (87 needles, the shortest 18 bytes).
func BenchmarkRedactorTraceStep100(b *testing.B) {
	raw, err := os.ReadFile("testdata/stage1_step100.txt")
	if err != nil {
		b.Fatal(err)
	}
	system, user, _ := strings.Cut(strings.TrimPrefix(string(raw), "=== system ===\n"), "=== user ===\n")
	tr := workflow.Trace{Stage: workflow.StageOne,
		Prompt:   []workflow.PromptMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Response: `{"action":"text.echo","actionObjective":"echo result of step 100"}`,
		Parsed:   json.RawMessage(`{"action":"text.echo","actionObjective":"echo result of step 100"}`)}
	for _, n := range []int{1, 20} {
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			r := redact.New(benchSecrets[:n]...)
			if r.Contains(system) || r.Contains(user) {
				b.Fatal("the prompt holds a secret")
			}
			b.SetBytes(int64(len(system) + len(user)))
			b.ReportAllocs()
			for b.Loop() {
				r.Trace(tr)
			}
		})
	}
}

// benchSecrets: the bench module's model key first, then secrets as a
// gateway's configuration holds them (API keys, tokens, passwords).
var benchSecrets = []string{
	"sk-bench-4f3c2a1b9e8d7c6b5a49382716",
	"sk-proj-Xq7Lm2Vb9Nc4Rt6Yh1Kd8Pw3Zs5Fj0Ga",
	"ghp_8fK2mQ9xL4vR7tB1nW6cY3pZ0sH5jD2aE",
	"xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOp",
	"AKIAIOSFODNN7EXAMPLE",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	`Pa"ss<w0rd>&Redis!`,
	"postgres-pw-9d8c7b6a",
	"glpat-Zx81Qv4Ty7Ui0Op3As6D",
	"AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJnYXRld2F5In0.c2lnbmF0dXJl",
	"tok_live_51HqLyjWDarjtT1zdp7dc",
	"hunter2-but-longer",
	"rk_test_4eC39HqLyjWDarjtT1zdp7dc",
	"naïve-pässwörd-42",
	"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",
	"key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
	"https-basic:admin:s3cr3t-P@ss",
	"0123456789abcdef0123456789abcdef",
	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
}
