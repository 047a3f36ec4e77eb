package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twostep/twostep/client"
)

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
		if q := res.QueuedRounds; len(q) > 0 {
			fmt.Fprintf(a.stdout, "%s\t%s\tround %d\tqueued as round %d\n", res.ID, res.Status, res.Round, q[len(q)-1].Round)
			return nil
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
		return &pausedError{msg: fmt.Sprintf("the round waits for %s\n  decide with: twostep approve %s %s   or: twostep reject %s %s",
			approvalLine(p), out.ID, p.ID, out.ID, p.ID)}
	}
	return nil
}

// progressLine is an action message in one line: step, action, status
// and the start of its summary.
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

// count is n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printMessage writes one message for people (show and events).
func printMessage(w io.Writer, m *client.Message) {
	fmt.Fprintf(w, "\n#%d round %d ", m.Seq, m.Round)
	switch m.Role {
	case "action":
		fmt.Fprintln(w, progressLine(m))
		if a := m.ApprovedBy; a != nil {
			fmt.Fprintf(w, "  approved by standing approval %s, granted by %s\n", a.StandingApprovalID, a.GrantedBy)
		}
	default:
		fmt.Fprintf(w, "%s: %s\n", m.Role, m.Text)
	}
	for _, d := range m.Documents {
		fmt.Fprintf(w, "  document %s  %s (%s, %d bytes)\n", d.ID, d.Name, d.MimeType, d.Size)
	}
}

// approvalLine describes a pending approval on one line: its kind, the
// action and objective, and what it holds (the parameters of a call, the
// fields Stage 2 will fill for an intent).
func approvalLine(p *client.PendingApproval) string {
	kind := p.Kind
	if kind == "" {
		kind = "call"
	}
	line := fmt.Sprintf("approval %s (%s): %s (%s)", p.ID, kind, p.Action, p.ActionObjective)
	if kind == "intent" {
		names := make([]string, len(p.Fields))
		for i, f := range p.Fields {
			names[i] = f.Name
		}
		return line + "; Stage 2 will fill: " + strings.Join(names, ", ")
	}
	if b, err := json.Marshal(p.Parameters); err == nil {
		line += " " + oneLine(string(b), 200)
	}
	return line
}
