// Command twostep is the command-line client of a twostep gateway: it
// starts workflows and waits for their answers, lists and shows them,
// follows their events, decides approvals and downloads documents. It
// talks to the gateway only through package client.
//
// The gateway is TWOSTEP_URL (default http://localhost:8080) and the
// bearer token TWOSTEP_TOKEN. Output is for people by default and JSON
// with --json. Exit codes: 0 success, 1 a failed or stopped round or an
// error answer (the reason on stderr), 2 a usage error, 3 a round paused
// for an approval.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitApproval = 3
)

const usage = `usage: twostep <command> [flags] [arguments]

Commands:
  run PROMPT [--file PATH]... [--mode react|actionplan] [--max-steps N] [--wait=false]
                        start a workflow and print its answer (progress on stderr)
  round ID PROMPT [--file PATH]... [--wait=false] [--on-busy=enqueue|interrupt]
                        start the next round of a workflow (or, while one runs,
                        queue it behind it or let it interrupt it)
  list [--status S] [--limit N] [--cursor C | --all]
                        the workflows, newest first
  show ID               a workflow and its messages
  events ID             follow a workflow's events until its round ends or pauses
  approve ID APPROVAL [--parameters JSON] [--constraints JSON] [--remember workflow|user [--ttl D]]
                 [--comment TEXT] [--wait=false]
  reject ID APPROVAL [--comment TEXT] [--wait=false]
                        decide a paused round's approval (call or intent), then follow the round
  standing              the standing approvals (decisions kept with --remember)
  revoke STANDING_ID    revoke one: the next call it would admit pauses
  stop ID | resume ID | delete ID
  download ID DOC [-o FILE]
                        a document's bytes (to stdout without -o)
  actions               the actions the gateway offers
  experiment --stage stage1|stage2 [--workflow ID]... [--since T] [--action A]
             [--template NAME=FILE]... [--model PROVIDER/MODEL] [--min-agreement 0.95]
                        re-run recorded calls under an override (admin token), print
                        the agreement table; exit 1 below --min-agreement

Every command takes --json (machine-readable output on stdout).
Environment: TWOSTEP_URL (default http://localhost:8080), TWOSTEP_TOKEN.
Exit codes: 0 success, 1 failed round or error, 2 usage, 3 paused for approval.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// pausedError reports a round waiting for an approval: exit code 3.
type pausedError struct{ msg string }

func (e *pausedError) Error() string { return e.msg }

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "twostep: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	app := &app{stdout: stdout, stderr: stderr, getenv: getenv}
	err := cmd(ctx, app, args[0], args[1:])
	var ue *usageError
	var pe *pausedError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "twostep %s: %s\nRun 'twostep help' for usage.\n", args[0], ue.msg)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintf(stderr, "twostep: %s\n", pe.msg)
		return exitApproval
	}
	fmt.Fprintf(stderr, "twostep: %s\n", strings.TrimPrefix(err.Error(), "twostep: "))
	return exitFailed
}

// stringList is a repeatable string flag (--file a --file b).
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parse parses flags anywhere among the arguments (run "prompt" --file
// a.pdf) and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) != len(names) {
		if len(names) == 0 {
			return nil, usagef("takes no arguments, got %q", pos)
		}
		return nil, usagef("wants %s, got %d argument(s)", strings.Join(names, " "), len(pos))
	}
	for i, p := range pos {
		if strings.TrimSpace(p) == "" {
			return nil, usagef("%s must not be empty", names[i])
		}
	}
	return pos, nil
}
