package redisstore

import (
	"context"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// keys names the store's keys under one prefix (see the package doc).
type keys struct{ prefix string }

// partitions is the number of partitions of each store-wide index (the
// admin listing and the running set): a workflow's entries go to the
// partition its id hashes to, so no single key — and on a cluster no single
// shard — takes every workflow's index writes.
const partitions = 16

// userKeys are the keys in the hash slot of one user: the user's listing,
// running set and every key of each of the user's workflows.
type userKeys struct {
	base     string // prefix:{u:<escaped user>}
	listing  string // sorted set of the user's workflow ids
	running  string // set of ids of the user's running workflows
	wfPrefix string // a workflow's keys are wfPrefix + id + ":" + name
}

// user returns the keys of userID's slot. The user id is query-escaped, an
// injective encoding with no braces, colons, spaces or glob characters
// left, so no user id can move its keys to another hash slot by a brace,
// reach another user's keys or turn a SCAN pattern into a wildcard.
func (k keys) user(userID string) userKeys {
	base := k.prefix + ":{u:" + url.QueryEscape(userID) + "}"
	// One allocation for the three keys: each is a slice of it.
	all := concat(base, ":workflows", base, ":running", base, ":wf:")
	n := len(base)
	return userKeys{
		base:     base,
		listing:  all[:n+10],
		running:  all[n+10 : 2*n+18],
		wfPrefix: all[2*n+18:],
	}
}

// concat is the concatenation of parts, in one allocation.
func concat(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

// wfKeys are the keys of one workflow, all in the slot of its user.
type wfKeys struct {
	state, msgs, docs, docmeta, traces, tracedata, lease string
}

func (u userKeys) workflow(id string) wfKeys {
	// The keys of a commit are built for every step: one allocation for
	// all seven, each a slice of it.
	p := u.wfPrefix
	all := concat(p, id, ":state", p, id, ":msgs", p, id, ":docs", p, id, ":docmeta",
		p, id, ":traces", p, id, ":tracedata", p, id, ":lease")
	next := func(suffix string) string {
		n := len(p) + len(id) + len(suffix)
		k := all[:n]
		all = all[n:]
		return k
	}
	return wfKeys{
		state:     next(":state"),
		msgs:      next(":msgs"),
		docs:      next(":docs"),
		docmeta:   next(":docmeta"),
		traces:    next(":traces"),
		tracedata: next(":tracedata"),
		lease:     next(":lease"),
	}
}

// all returns every key of the workflow.
func (w wfKeys) all() []string {
	return []string{w.state, w.msgs, w.docs, w.docmeta, w.traces, w.tracedata, w.lease}
}

// owner names the key holding the user of workflow id (in the id's own
// slot): the way from an id to the slot of the workflow's keys.
func (k keys) owner(id string) string { return k.prefix + ":owner:{" + id + "}" }

// trace names the trace index entry of traceID: the ref of its workflow.
func (k keys) trace(traceID string) string { return k.prefix + ":trace:{" + traceID + "}" }

// listingPart and runningPart name partition i of the admin listing (a
// sorted set of refs, lex order = id order) and of the running set (a set
// of refs).
func (k keys) listingPart(i int) string { return k.prefix + ":{" + partTag(i) + "}:workflows" }
func (k keys) runningPart(i int) string { return k.prefix + ":{" + partTag(i) + "}:running" }

func partTag(i int) string { return "i" + strconv.Itoa(i) }

// partition returns the index partition of workflow id.
func partition(id string) int { return hashPartition(id, partitions) }

// hashPartition is the partition of workflow id among n: fnv32a(id) % n.
// The store-wide indexes and the dispatch streams both spread workflows
// with it.
func hashPartition(id string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// ref is a workflow's entry in the store-wide indexes: its id and its user
// (query-escaped), separated by a NUL byte, which no id holds. A ref sorts
// as its id does (NUL is below every byte of an id), so the listing's lex
// order stays the order of ids, and the reader learns the user's slot from
// the entry itself.
func ref(id, userID string) string { return id + "\x00" + url.QueryEscape(userID) }

// parseRef splits a ref; ok is false for anything that is not one.
func parseRef(r string) (id, userID string, ok bool) {
	id, esc, found := strings.Cut(r, "\x00")
	if !found || id == "" {
		return "", "", false
	}
	userID, err := url.QueryUnescape(esc)
	if err != nil || userID == "" {
		return "", "", false
	}
	return id, userID, true
}

// checkWorkflowID validates a workflow id used in a key: KindInvalid when
// empty. A brace would break the hash tag of the owner key and a NUL byte
// a ref, so no stored workflow has one: a write (forWrite) is KindInvalid,
// a read KindNotFound.
func checkWorkflowID(ctx context.Context, id string, forWrite bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case id == "":
		return workflow.Errorf(workflow.KindInvalid, "workflow id is required")
	case strings.ContainsAny(id, "{}\x00") && forWrite:
		return workflow.Errorf(workflow.KindInvalid, "workflow id %q must not contain braces or NUL bytes", id)
	case strings.ContainsAny(id, "{}\x00"):
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
