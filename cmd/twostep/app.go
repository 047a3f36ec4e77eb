package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"

	"github.com/twostep/twostep/client"
)

// app is what every command needs: the output streams and the client.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	json           bool
}

// client is the gateway's client from TWOSTEP_URL and TWOSTEP_TOKEN.
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

// command runs one CLI command; name is the command as typed (one
// function may serve several names).
type command func(ctx context.Context, a *app, name string, args []string) error

// commands maps each command name to its function, one file per command.
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
	"standing": cmdStanding,
	"revoke":   cmdRevoke,

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

// listCommand runs a command that takes no arguments and shows a list the
// client fetches: the list as JSON with --json, else line for each item.
func listCommand[T any](ctx context.Context, a *app, name string, args []string,
	fetch func(*client.Client, context.Context) ([]T, error), line func(T)) error {
	fs := a.flags(name)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	list, err := fetch(c, ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(list)
	}
	for _, item := range list {
		line(item)
	}
	return nil
}
