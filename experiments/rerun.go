package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// recorded is one recorded accepted call with what its re-run reads: the
// workflow (its user picks the registry), its messages (Stage 1's
// references resolve against them) and, for Stage 2, the step's Stage 1
// selection.
type recorded struct {
	wf        *workflow.Workflow
	msgs      []workflow.Message
	trace     workflow.Trace
	selection *workflow.Selection
}

// setup is what every call of one experiment shares.
type setup struct {
	stage     workflow.Stage
	templates map[string]templates.Template
	model     workflow.Model
	builder   *prompts.Builder
	registry  workflow.Registry
	prices    economy.Prices
}

// rerun renders c's call again under s, sends it, parses the reply as the
// mode does and scores it against the recorded reply. Nothing is stored
// and nothing executed. Only a cancelled ctx returns an error.
func (s *setup) rerun(ctx context.Context, c recorded) (Call, error) {
	out := Call{TraceID: c.trace.ID, WorkflowID: c.wf.ID, Round: c.trace.Round, Step: c.trace.Step}
	reg := workflow.UserRegistry(s.registry, c.wf.UserID)
	var err error
	if s.stage == workflow.StageOne {
		err = s.stage1(ctx, c, reg, &out)
	} else {
		err = s.stage2(ctx, c, reg, &out)
	}
	if err != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	if be := (*workflow.BudgetError)(nil); errors.As(err, &be) {
		return out, err // the admin's budget is spent: the experiment fails
	}
	if err != nil {
		out.Error = workflow.PublicMessage(err)
		out.Agreement = Agreement{}
	}
	return out, nil
}

// template is the override of name, else the gateway's.
func (s *setup) template(name string) (templates.Template, error) {
	if t, ok := s.templates[name]; ok {
		return t, nil
	}
	return s.builder.Templates().Get(name)
}

func (s *setup) stage1(ctx context.Context, c recorded, reg workflow.Registry, out *Call) error {
	env := prompts.Stage1Env{Registry: reg, Messages: c.msgs, Connections: workflow.UserConnections(s.registry, c.wf.UserID)}
	was := prompts.ParseStage1(c.trace.Response, env)
	out.Recorded = marshal(was.Selection)
	if c.trace.Inputs == nil {
		return workflow.Errorf(workflow.KindConflict, "trace %s was recorded before traces kept their inputs: Stage 1 cannot be rendered again", c.trace.ID)
	}
	name := c.trace.Template
	if name == "" {
		name = templates.Stage1
	}
	t, err := s.template(name)
	if err != nil {
		return err
	}
	schema := s.builder.Stage1Output(reg.Actions(), env.Connections)
	req := workflow.ModelRequest{Stage: workflow.StageOne, JSON: prompts.ObjectReply(workflow.StageOne), Output: &schema}
	r, err := prompts.RenderTemplateFor(templateOutput(workflow.PlannedOutput(s.model, req)), t, withKeys(t, c.trace.Inputs))
	if err != nil {
		return err
	}
	reply, err := s.generate(ctx, req, r.Messages, nil, out)
	if err != nil {
		return err
	}
	now := prompts.ParseStage1(reply, env)
	if len(now.Problems) > 0 {
		return workflow.Errorf(workflow.KindInvalid, "the reply was rejected: %s", strings.Join(now.Problems, "; "))
	}
	out.Result = marshal(now.Selection)
	out.Agreement = agree1(was.Selection, now.Selection)
	return nil
}

func (s *setup) stage2(ctx context.Context, c recorded, reg workflow.Registry, out *Call) error {
	if c.selection == nil {
		return workflow.Errorf(workflow.KindConflict, "the Stage 1 selection of round %d step %d is no longer among the kept traces", c.trace.Round, c.trace.Step)
	}
	sel := *c.selection
	spec, ok := reg.Action(sel.Action)
	if !ok {
		return workflow.Errorf(workflow.KindConflict, "the selected action %q is no longer registered", sel.Action)
	}
	in := prompts.Stage2Input{Selection: sel, Action: spec}
	if t, ok := s.templates[templates.Stage2]; ok {
		in.Template = &t
	}
	s2, err := s.builder.Stage2Output(in)
	if err != nil {
		return err
	}
	recordedReply := c.trace.Response
	if c.trace.OutputMode.Native() {
		recordedReply = s2.FromNative(recordedReply)
	}
	was := s.builder.ParseStage2(recordedReply, spec, sel.ParametersSchema.Fields, reg)
	out.Recorded = marshal(was.Parameters)
	req := workflow.ModelRequest{Stage: workflow.StageTwo, JSON: prompts.ObjectReply(workflow.StageTwo), Output: &s2.Output}
	in.Output = templateOutput(workflow.PlannedOutput(s.model, req))
	r, err := s.builder.Stage2(in)
	if err != nil {
		return err
	}
	reply, err := s.generate(ctx, req, r.Messages, s2.FromNative, out)
	if err != nil {
		return err
	}
	now := s.builder.ParseStage2(reply, spec, sel.ParametersSchema.Fields, reg)
	if len(now.Problems) > 0 {
		return workflow.Errorf(workflow.KindInvalid, "the reply was rejected: %s", strings.Join(now.Problems, "; "))
	}
	out.Result = marshal(now.Parameters)
	out.Agreement = agree2(was.Parameters, now.Parameters)
	return nil
}

// generate sends prompt and returns the reply as the stage's parse reads
// it, counting tokens and cost into out. The call is first put to ctx's
// model guard (the budget of the admin who started the experiment).
func (s *setup) generate(ctx context.Context, req workflow.ModelRequest, prompt []workflow.PromptMessage, fromNative func(string) string, out *Call) (string, error) {
	req.Messages = prompt
	done, err := workflow.GuardModelCall(ctx, req)
	if err != nil {
		return "", err
	}
	resp, err := s.model.Generate(ctx, req)
	done(resp)
	out.Model = resp.Model
	out.Tokens = resp.PromptTokens + resp.CompletionTokens
	if p, ok := s.prices[resp.Model]; ok {
		usd := p.USD(economy.Tokens{Input: resp.PromptTokens, Cached: resp.CachedTokens, Output: resp.CompletionTokens})
		out.USD = &usd
	}
	if err != nil {
		return "", fmt.Errorf("the model could not answer: %w", err)
	}
	if resp.Truncated {
		return "", workflow.Errorf(workflow.KindInvalid, "%s", workflow.TruncatedProblem(resp))
	}
	if fromNative != nil && resp.OutputMode.Native() {
		return fromNative(resp.Text), nil
	}
	return resp.Text, nil
}

// withKeys is inputs with every key of t that inputs lacks set to "": an
// override may use a placeholder the recorded template did not.
func withKeys(t templates.Template, inputs map[string]string) map[string]string {
	out := maps.Clone(inputs)
	for _, k := range t.Keys() {
		if _, ok := out[k]; !ok {
			out[k] = ""
		}
	}
	return out
}

func templateOutput(mode workflow.OutputMode) templates.Output {
	if mode.Native() {
		return templates.NativeOutput
	}
	return templates.TextOutput
}

// agree1 scores a Stage 1 selection: action, references (documents as a
// set, and the connection) and fields (the names asked, as a set).
func agree1(was, now workflow.Selection) Agreement {
	action := was.Action == now.Action
	refs := sameSet(was.RequiredInputDocuments, now.RequiredInputDocuments) && was.RequiredConnection == now.RequiredConnection
	fields := sameSet(fieldNames(was), fieldNames(now))
	return Agreement{Action: &action, References: &refs, Fields: &fields, All: action && refs && fields}
}

// agree2 scores Stage 2 parameter by parameter: equal JSON values, a
// parameter only one side has disagreeing.
func agree2(was, now map[string]any) Agreement {
	a := Agreement{Parameters: map[string]bool{}, All: true}
	for _, k := range slices.Sorted(maps.Keys(was)) {
		a.Parameters[k] = false
	}
	for k := range now {
		a.Parameters[k] = false
	}
	for k := range a.Parameters {
		w, inW := was[k]
		n, inN := now[k]
		a.Parameters[k] = inW && inN && reflect.DeepEqual(normal(w), normal(n))
		a.All = a.All && a.Parameters[k]
	}
	return a
}

// normal is v as JSON decodes it, so 1 and 1.0 compare equal.
func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func fieldNames(s workflow.Selection) []string {
	out := make([]string, len(s.ParametersSchema.Fields))
	for i, f := range s.ParametersSchema.Fields {
		out[i] = f.Name
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
