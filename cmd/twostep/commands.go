package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twostep/twostep/client"
)

// app is what every command needs: the output streams and the client.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	json           bool
}

func (a *app) client() (*client.Client, error) {
	url := a.getenv("TWOSTEP_URL")
	if url == "" {
		url = "http://localhost:8080"
	}
	c, err := client.New(url, a.getenv("TWOSTEP_TOKEN"))
	if err != nil {
		return nil, usagef("TWOSTEP_URL: %v", err)
	}
	return c, nil
}

// flags is a command's flag set with --json.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.BoolVar(&a.json, "json", false, "machine-readable output")
	return fs
}

// printJSON writes v as indented JSON on stdout.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type command func(ctx context.Context, a *app, name string, args []string) error

var commands = map[string]command{
	"run":      cmdRun,
	"round":    cmdRound,
	"list":     cmdList,
	"show":     cmdShow,
	"events":   cmdEvents,
	"approve":  cmdDecide,
	"reject":   cmdDecide,
	"stop":     cmdSimple,
	"resume":   cmdSimple,
	"delete":   cmdSimple,
	"download": cmdDownload,
	"actions":  cmdActions,

	"experiment": cmdExperiment,
}

// uploads checks that every file exists before anything is sent.
func uploads(files []string) ([]client.Upload, error) {
	out := make([]client.Upload, 0, len(files))
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, usagef("--file %s: %v", f, err)
		}
		if st.IsDir() {
			return nil, usagef("--file %s is a directory", f)
		}
		out = append(out, client.File(f))
	}
	return out, nil
}

// maxStepsLimit is the largest step limit the API takes (maxSteps,
// DESIGN §6).
const maxStepsLimit = 100

func cmdRun(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var files stringList
	fs.Var(&files, "file", "a document to upload (repeatable)")
	mode := fs.String("mode", "", "react (default) or actionplan")
	maxSteps := fs.Int("max-steps", 0, "step limit of each round (default: the gateway's)")
	wait := fs.Bool("wait", true, "wait for the round to end (false: print the workflow and return)")
	pos, err := parse(fs, args, "PROMPT")
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["max-steps"] && (*maxSteps < 1 || *maxSteps > maxStepsLimit) {
		return usagef("--max-steps must be between 1 and %d, not %d (leave it out for the gateway's default)", maxStepsLimit, *maxSteps)
	}
	if set["mode"] && *mode != "react" && *mode != "actionplan" {
		return usagef("--mode must be react or actionplan, not %q", *mode)
	}
	docs, err := uploads(files)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	res, err := c.Create(ctx, client.CreateRequest{Prompt: pos[0], Mode: *mode, MaxSteps: *maxSteps, Documents: docs})
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, 0, *wait)
}

func cmdRound(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var files stringList
	fs.Var(&files, "file", "a document to upload (repeatable)")
	wait := fs.Bool("wait", true, "wait for the round to end (false: print the workflow and return)")
	pos, err := parse(fs, args, "ID", "PROMPT")
	if err != nil {
		return err
	}
	docs, err := uploads(files)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	after, err := lastSeq(ctx, c, pos[0])
	if err != nil {
		return err
	}
	res, err := c.StartRound(ctx, pos[0], pos[1], 0, docs...)
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, after, *wait)
}

func cmdDecide(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	comment := fs.String("comment", "", "a note for the record (and, on reject, for the model)")
	params := ""
	if name == "approve" {
		fs.StringVar(&params, "parameters", "", "edited parameters as a JSON object")
	}
	wait := fs.Bool("wait", true, "follow the round after the decision")
	pos, err := parse(fs, args, "ID", "APPROVAL")
	if err != nil {
		return err
	}
	d := client.Decision{Approve: name == "approve", Comment: *comment}
	if params != "" {
		if err := json.Unmarshal([]byte(params), &d.Parameters); err != nil || d.Parameters == nil {
			return usagef("--parameters must be a JSON object: %v", err)
		}
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	after, err := lastSeq(ctx, c, pos[0])
	if err != nil {
		return err
	}
	res, err := c.Decide(ctx, pos[0], pos[1], d, 0)
	if err != nil {
		return err
	}
	return a.follow(ctx, c, res, after, *wait)
}

// lastSeq is the seq of the workflow's last message, so that following a
// new round shows only its own messages.
func lastSeq(ctx context.Context, c *client.Client, id string) (int64, error) {
	msgs, err := c.Messages(ctx, id, 0)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return msgs[len(msgs)-1].Seq, nil
}

// follow waits for the round of res to settle, showing its messages on
// stderr as they come, then prints the answer (or the whole result with
// --json). A failed round is an error, a paused one a pausedError.
func (a *app) follow(ctx context.Context, c *client.Client, res *client.Result, after int64, wait bool) error {
	if !wait {
		if a.json {
			return a.printJSON(res)
		}
		fmt.Fprintf(a.stdout, "%s\t%s\tround %d\n", res.ID, res.Status, res.Round)
		return nil
	}
	fmt.Fprintf(a.stderr, "twostep: %s round %d running…\n", res.ID, res.Round)
	start := time.Now()
	out, err := c.Wait(ctx, res.ID, after, func(ev client.Event) {
		if ev.Type == "message" && ev.Message.Role == "action" {
			fmt.Fprintf(a.stderr, "  %s\n", progressLine(ev.Message))
		}
	})
	if out == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; the round goes on without you: twostep show %s (or twostep stop %s)", res.ID, res.ID)
		}
		return err
	}
	if a.json {
		if jerr := a.printJSON(out); jerr != nil {
			return jerr
		}
	} else if answer := out.Answer(); answer != "" {
		fmt.Fprintln(a.stdout, answer)
	}
	fmt.Fprintf(a.stderr, "twostep: %s round %d %s after %s (%s, %s)\n", out.ID, out.Round, out.Status,
		time.Since(start).Round(100*time.Millisecond), count(out.Step, "step"), count(out.Stats.LLMCalls, "model call"))
	if err != nil {
		return err
	}
	if p := out.PendingApproval; out.Status == "awaiting_approval" && p != nil {
		return &pausedError{msg: fmt.Sprintf("the round waits for approval %s of %s (%s)\n  decide with: twostep approve %s %s   or: twostep reject %s %s",
			p.ID, p.Action, p.ActionObjective, out.ID, p.ID, out.ID, p.ID)}
	}
	return nil
}

func progressLine(m *client.Message) string {
	line := fmt.Sprintf("step %d: %s %s", m.Step, m.Action, m.Status)
	if s := oneLine(m.Summary, 100); s != "" {
		line += " — " + s
	}
	return line
}

// oneLine shortens text to one line of at most n runes.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func cmdList(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	var o client.ListOptions
	fs.StringVar(&o.Status, "status", "", "only this status (running, awaiting_approval, completed, failed, stopped)")
	fs.IntVar(&o.Limit, "limit", 0, "page size (default: the gateway's)")
	fs.StringVar(&o.Cursor, "cursor", "", "the next page's cursor")
	all := fs.Bool("all", false, "every page")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	page := &client.Page{Workflows: []client.Workflow{}}
	if *all {
		for w, err := range c.ListAll(ctx, o) {
			if err != nil {
				return err
			}
			page.Workflows = append(page.Workflows, w)
		}
	} else if page, err = c.List(ctx, o); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(page)
	}
	for _, w := range page.Workflows {
		fmt.Fprintf(a.stdout, "%s\t%-17s\tround %d\t%s\t%s\n", w.ID, w.Status, w.Round,
			w.UpdatedAt.Local().Format("2006-01-02 15:04"), oneLine(w.Title, 60))
	}
	if page.NextCursor != "" {
		fmt.Fprintf(a.stderr, "twostep: more with --cursor %s (or --all)\n", page.NextCursor)
	}
	return nil
}

func cmdShow(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	w, err := c.Get(ctx, pos[0])
	if err != nil {
		return err
	}
	msgs, err := c.Messages(ctx, pos[0], 0)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(struct {
			Workflow *client.Workflow `json:"workflow"`
			Messages []client.Message `json:"messages"`
		}{w, msgs})
	}
	fmt.Fprintf(a.stdout, "%s  %s\nstatus %s", w.ID, w.Title, w.Status)
	if w.StopReason != "" && w.StopReason != w.Status {
		fmt.Fprintf(a.stdout, " (%s)", w.StopReason)
	}
	fmt.Fprintf(a.stdout, ", round %d, step %d of %d, %s, %s\n", w.Round, w.Step, w.MaxSteps, w.Mode, count(w.Stats.LLMCalls, "model call"))
	if w.Error != "" {
		fmt.Fprintf(a.stdout, "error: %s\n", w.Error)
	}
	if p := w.PendingApproval; p != nil {
		fmt.Fprintf(a.stdout, "waiting for approval %s: %s (%s)\n", p.ID, p.Action, p.ActionObjective)
	}
	for i := range msgs {
		printMessage(a.stdout, &msgs[i])
	}
	return nil
}

func printMessage(w io.Writer, m *client.Message) {
	fmt.Fprintf(w, "\n#%d round %d ", m.Seq, m.Round)
	switch m.Role {
	case "action":
		fmt.Fprintln(w, progressLine(m))
	default:
		fmt.Fprintf(w, "%s: %s\n", m.Role, m.Text)
	}
	for _, d := range m.Documents {
		fmt.Fprintf(w, "  document %s  %s (%s, %d bytes)\n", d.ID, d.Name, d.MimeType, d.Size)
	}
}

func cmdEvents(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	for ev, err := range c.Events(ctx, pos[0]) {
		if err != nil {
			return err
		}
		switch {
		case a.json:
			if err := enc.Encode(ev); err != nil {
				return err
			}
		case ev.Type == "message":
			printMessage(a.stdout, ev.Message)
		case ev.Type == "status":
			fmt.Fprintf(a.stdout, "status %s (round %d, step %d)\n", ev.Workflow.Status, ev.Workflow.Round, ev.Workflow.Step)
		case ev.Type == "approval":
			fmt.Fprintf(a.stdout, "approval %s: %s (%s)\n", ev.Approval.ID, ev.Approval.Action, ev.Approval.ActionObjective)
		default:
			fmt.Fprintln(a.stdout, ev.Type)
		}
	}
	return nil
}

func cmdSimple(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	pos, err := parse(fs, args, "ID")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	var w *client.Workflow
	switch name {
	case "stop":
		w, err = c.Stop(ctx, pos[0])
	case "resume":
		w, err = c.Resume(ctx, pos[0])
	case "delete":
		if err = c.Delete(ctx, pos[0]); err == nil && !a.json {
			fmt.Fprintf(a.stdout, "%s deleted\n", pos[0])
		}
		return err
	}
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(w)
	}
	fmt.Fprintf(a.stdout, "%s\t%s\tround %d\n", w.ID, w.Status, w.Round)
	return nil
}

func cmdDownload(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	out := fs.String("o", "", "write to this file (default: stdout)")
	pos, err := parse(fs, args, "ID", "DOC")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	body, ctype, err := c.Document(ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	defer body.Close()
	if *out == "" || *out == "-" {
		_, err = io.Copy(a.stdout, body)
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out) // no half-written file
		return err
	}
	fmt.Fprintf(a.stderr, "twostep: wrote %d bytes (%s) to %s\n", n, ctype, *out)
	return nil
}

func cmdActions(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	acts, err := c.Actions(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(acts)
	}
	for _, act := range acts {
		fmt.Fprintf(a.stdout, "%-24s %-5s %s\n", act.Name, act.Effect, oneLine(act.Description, 90))
	}
	return nil
}
