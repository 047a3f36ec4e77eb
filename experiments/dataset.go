package experiments

import (
	"context"
	"encoding/json"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Reads is what experiments and datasets read: any user's workflows, their
// messages and traces. *engine.AdminReader (Engine.Admin) is one. It is
// only read.
type Reads interface {
	Get(ctx context.Context, id string) (*workflow.Workflow, error)
	List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error)
	Messages(ctx context.Context, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
	Traces(ctx context.Context, id string) ([]workflow.Trace, error)
}

// listPage is how many workflows one listing read returns.
const listPage = 100

// Line is one recorded accepted call of a dataset: the placeholder values
// its prompt was rendered from (null on traces recorded before traces kept
// them), the prompt, the accepted output as parsed, the model. Traces are
// redacted when stored, so a line carries no secret.
type Line struct {
	TraceID    string                   `json:"traceId"`
	WorkflowID string                   `json:"workflowId"`
	Round      int                      `json:"round"`
	Step       int                      `json:"step"`
	Stage      workflow.Stage           `json:"stage"`
	Attempt    int                      `json:"attempt"`
	Template   string                   `json:"template"`
	Inputs     map[string]string        `json:"inputs"`
	Prompt     []workflow.PromptMessage `json:"prompt"`
	Output     json.RawMessage          `json:"output"`
	Model      string                   `json:"model"`
	CreatedAt  time.Time                `json:"createdAt"`
}

// Accepted reports whether t records an accepted model call of stage: a
// prompt sent, a reply that passed the stage's checks.
func Accepted(t workflow.Trace, stage workflow.Stage) bool {
	return t.Stage == stage && t.Error == "" && len(t.Prompt) > 0 && len(t.Parsed) > 0
}

// Dataset calls fn with every recorded accepted call of stage created at
// or after since (zero: all), workflow by workflow (newest first), reading
// one page of workflows and one workflow's traces at a time. It stops at
// fn's first error and returns it.
func Dataset(ctx context.Context, reads Reads, stage workflow.Stage, since time.Time, fn func(Line) error) error {
	return eachWorkflow(ctx, reads, nil, func(wf *workflow.Workflow) error {
		if wf.UpdatedAt.Before(since) {
			return nil // no trace of it is newer than its last change
		}
		traces, err := reads.Traces(ctx, wf.ID)
		if err != nil {
			return skipGone(err)
		}
		for _, t := range traces {
			if !Accepted(t, stage) || t.CreatedAt.Before(since) {
				continue
			}
			line := Line{TraceID: t.ID, WorkflowID: t.WorkflowID, Round: t.Round, Step: t.Step, Stage: t.Stage,
				Attempt: t.Attempt, Template: t.Template, Inputs: t.Inputs, Prompt: t.Prompt, Output: t.Parsed,
				Model: t.Model, CreatedAt: t.CreatedAt}
			if err := fn(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// eachWorkflow calls fn with each of ids' workflows or, with no ids, with
// every workflow page by page; a workflow deleted meanwhile is skipped.
func eachWorkflow(ctx context.Context, reads Reads, ids []string, fn func(*workflow.Workflow) error) error {
	if len(ids) > 0 {
		for _, id := range ids {
			wf, err := reads.Get(ctx, id)
			if err != nil {
				return err
			}
			if err := fn(wf); err != nil {
				return err
			}
		}
		return nil
	}
	p := workflow.Page{Limit: listPage}
	for {
		wfs, next, err := reads.List(ctx, "", p)
		if err != nil {
			return err
		}
		for _, wf := range wfs {
			if err := fn(wf); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		p.Cursor = next
	}
}

// skipGone turns a workflow deleted between listing and reading into no
// error.
func skipGone(err error) error {
	if workflow.KindOf(err) == workflow.KindNotFound {
		return nil
	}
	return err
}
