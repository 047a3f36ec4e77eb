package redisstore

import (
	"context"
	"net/url"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// keys names the store's keys under one prefix (see the package doc).
type keys struct{ prefix string }

// wfKeys are the keys of one workflow, all in the slot of its hash tag.
type wfKeys struct {
	state, msgs, docs, docmeta, traces, tracedata, lease string
}

func (k keys) workflow(id string) wfKeys {
	base := k.prefix + ":{" + id + "}:"
	return wfKeys{
		state:     base + "state",
		msgs:      base + "msgs",
		docs:      base + "docs",
		docmeta:   base + "docmeta",
		traces:    base + "traces",
		tracedata: base + "tracedata",
		lease:     base + "lease",
	}
}

// all returns every key of the workflow.
func (w wfKeys) all() []string {
	return []string{w.state, w.msgs, w.docs, w.docmeta, w.traces, w.tracedata, w.lease}
}

func (k keys) user(userID string) string   { return k.prefix + ":user:{" + userID + "}:workflows" }
func (k keys) listing() string             { return k.prefix + ":workflows" }
func (k keys) trace(traceID string) string { return k.prefix + ":trace:{" + traceID + "}" }
func (k keys) running() string             { return k.prefix + ":running" }

// runningFor names userID's running set. The user id is query-escaped, an
// injective encoding with no braces, colons or glob characters left, so no
// user id can move the key to another hash slot by a brace, reach another
// user's set or another index, or turn a SCAN pattern into a wildcard.
func (k keys) runningFor(userID string) string {
	return k.prefix + ":running:u:" + url.QueryEscape(userID)
}

// checkWorkflowID validates a workflow id used in a key: KindInvalid when
// empty. A brace would break the shared hash tag, so no stored workflow has
// one: a write (forWrite) is KindInvalid, a read KindNotFound.
func checkWorkflowID(ctx context.Context, id string, forWrite bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case id == "":
		return workflow.Errorf(workflow.KindInvalid, "workflow id is required")
	case strings.ContainsAny(id, "{}") && forWrite:
		return workflow.Errorf(workflow.KindInvalid, "workflow id %q must not contain braces", id)
	case strings.ContainsAny(id, "{}"):
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	return nil
}

// checkID returns ctx's error, or KindInvalid when id is empty.
func checkID(ctx context.Context, what, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if id == "" {
		return workflow.Errorf(workflow.KindInvalid, "%s is required", what)
	}
	return nil
}
