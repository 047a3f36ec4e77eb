// Package redisstore is the Redis workflow.Store, for gateways that share
// state or must survive a restart. It works on a single Redis node (Redis
// 7.0 commands only, no KEYS); Open refuses a Redis Cluster node, because the
// commit script also writes the user's running set, in another slot.
//
// Layout (prefix "twostep" by default). Every key of one workflow carries the
// workflow id as its hash tag:
//
//	twostep:{wf_…}:state      hash: version, user, status, json (the workflow),
//	                          fence (the fencing token of the latest lease)
//	twostep:{wf_…}:msgs       list of message JSON; a message's seq is its index+1
//	twostep:{wf_…}:docs       hash: document id -> bytes
//	twostep:{wf_…}:docmeta    hash: document id -> metadata JSON
//	twostep:{wf_…}:traces     list of trace ids, oldest first (at most TraceCap)
//	twostep:{wf_…}:tracedata  hash: trace id -> trace JSON
//	twostep:{wf_…}:lease      the owner of the running round (PX = lease ttl)
//
// Five indexes live in other slots and are written with separate commands
// in the same pipeline; readers tolerate entries whose workflow is gone:
//
//	twostep:user:{userId}:workflows  sorted set of the user's workflow ids (lex order = creation order)
//	twostep:workflows                sorted set of every workflow id, for ListAll (lex order = creation order)
//	twostep:trace:{traceId}          the workflow id of a trace
//	twostep:running                  set of ids of workflows that may be running
//	twostep:running:u:<userId>       set of ids of the user's running workflows
//
// The commit script keeps the user's running set itself (an id is in it
// exactly while its workflow is stored running), so its SCARD is the exact
// count the running limit is checked against (DeleteWorkflow's script takes
// the id out too). Only retention, expiring a workflow while it runs, leaves
// a stale entry there, which can refuse a start but never admit one beyond
// the limit.
// In the per-user running set's name the user id is query-escaped
// (url.QueryEscape), so it holds no brace, colon or glob character.
//
// With Options.Retention, a workflow's keys expire together; the user's
// listing key expires a Retention after the user's last commit, the global
// listing a Retention after anyone's last commit, the user's running set a
// Retention after the user's last commit, and the
// trace index entries a Retention after they were written. Until then,
// listing entries of expired workflows stay in the sorted sets (readers
// skip them), as do running-set entries of workflows that expired while
// running; the shared running set never expires.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Defaults of Options.
const (
	DefaultKeyPrefix = "twostep"
	DefaultTraceCap  = 500
)

var _ workflow.Store = (*Store)(nil)

// Options configures a Store. The zero value uses the defaults.
type Options struct {
	// KeyPrefix starts every key ("twostep" when empty). It must not
	// contain '{' or '}'.
	KeyPrefix string
	// TraceCap is the number of newest traces kept per workflow (500 when
	// <= 0).
	TraceCap int
	// Retention, when positive, is the time-to-live of every key of a
	// workflow, refreshed by each commit; zero keeps workflows until they
	// are deleted.
	Retention time.Duration
}

// withDefaults fills in the defaults and rejects what cannot work.
func (o Options) withDefaults() (Options, error) {
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if strings.ContainsAny(o.KeyPrefix, "{}") {
		return o, workflow.Errorf(workflow.KindInvalid, "key prefix %q must not contain braces", o.KeyPrefix)
	}
	if o.TraceCap <= 0 {
		o.TraceCap = DefaultTraceCap
	}
	if o.Retention < 0 {
		return o, workflow.Errorf(workflow.KindInvalid, "retention %v is negative", o.Retention)
	}
	return o, nil
}

// Store is the Redis workflow.Store. It is safe for concurrent use.
type Store struct {
	rdb   redis.UniversalClient
	opts  Options
	keys  keys
	owned bool // Close closes rdb
}

// New returns a store over an existing client, which the caller keeps
// owning (Close does not close it). It panics when opts are invalid (a key
// prefix with braces, a negative retention): that is a programming error.
func New(client redis.UniversalClient, opts Options) *Store {
	o, err := opts.withDefaults()
	if err != nil {
		panic("redisstore.New: " + err.Error())
	}
	return &Store{rdb: client, opts: o, keys: keys{prefix: o.KeyPrefix}}
}

// Open connects to the Redis at url (redis:// or rediss://, with an optional
// database number) and pings it: an unreachable Redis is an error of kind
// KindUnavailable. Close releases the connection.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("redisstore.Open: %w", err)
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: neither the message nor the cause
		// may echo it.
		return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: the Redis URL is malformed: %s", urlProblem(err, url))
	}
	client := redis.NewClient(ro)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, workflow.WrapKind(workflow.KindUnavailable, err, "redisstore.Open: Redis at %s does not answer", ro.Addr)
	}
	if isClusterNode(ctx, client) {
		_ = client.Close()
		return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: Redis at %s is a Redis Cluster node; the store needs a single Redis node (or a managed Redis with cluster mode disabled)", ro.Addr)
	}
	return &Store{rdb: client, opts: o, keys: keys{prefix: o.KeyPrefix}, owned: true}, nil
}

// isClusterNode reports whether INFO cluster says the node runs in cluster
// mode, where the store's multi-key scripts would fail on every commit.
// A node that refuses INFO (an ACL without it) is taken as a single node.
func isClusterNode(ctx context.Context, c *redis.Client) bool {
	info, err := c.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}

// Close closes the connection Open made; for a store made with New it does
// nothing.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.rdb.Close()
}

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) (err error) {
	defer workflow.Wrap(&err, "redisstore.Ping")
	return redisErr(s.rdb.Ping(ctx).Err())
}

// redisErr turns a go-redis error into a domain error: context errors stay
// as they are, errors Redis replied with are internal (a bug in a command or
// script), anything else means Redis cannot be reached.
func redisErr(err error) error {
	var reply redis.Error
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, redis.Nil):
		return workflow.WrapKind(workflow.KindNotFound, err, "not found")
	case errors.As(err, &reply):
		return workflow.WrapKind(workflow.KindInternal, err, "redis rejected a command")
	}
	return workflow.WrapKind(workflow.KindUnavailable, err, "redis is unavailable")
}

// urlProblem says what is wrong with a Redis URL without quoting it: the
// parser's own reason when it has one, else its message with the URL cut
// out.
func urlProblem(err error, rawURL string) string {
	var uerr *neturl.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return strings.ReplaceAll(err.Error(), rawURL, "<url>")
}
