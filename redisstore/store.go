// Package redisstore is the Redis workflow.Store, for gateways that share
// state or must survive a restart. It works on a single Redis node and on a
// Redis Cluster (Redis 7.0 commands only, no KEYS): every Lua script and
// MULTI touches keys of one hash slot.
//
// Layout (prefix "twostep" by default; <u> is the user id query-escaped).
// A user's hash slot holds everything the atomic commit needs: the keys of
// each of the user's workflows, the user's listing and running set.
//
//	twostep:{u:<u>}:wf:<id>:state      hash: version, user, status, json (the state record),
//	                                   fence (the fencing token of the latest lease),
//	                                   holder (the owner of the latest lease until it
//	                                   releases it: left by a lease that expired)
//	twostep:{u:<u>}:wf:<id>:msgs       list of message records; a message's seq is its index+1
//	twostep:{u:<u>}:wf:<id>:docs       hash: document id -> bytes
//	twostep:{u:<u>}:wf:<id>:docmeta    hash: document id -> document record (the metadata)
//	twostep:{u:<u>}:wf:<id>:traces     list of trace ids, oldest first (at most TraceCap)
//	twostep:{u:<u>}:wf:<id>:tracedata  hash: trace id -> trace record
//	twostep:{u:<u>}:wf:<id>:lease      the owner of the running round (PX = lease ttl)
//	twostep:{u:<u>}:workflows          sorted set of the user's workflow ids (lex order = creation order)
//	twostep:{u:<u>}:running            set of ids of the user's running workflows
//	twostep:{u:<u>}:idem:<sha256 hex>  an Idempotency-Key: "p"+token while claimed, then "a"+answer record (idempotency.go)
//
// The records — what the JSON values hold, and their layout versions — are
// defined in record.go and encoded with encoding/json.
//
// The commit script keeps the user's listing and running set itself (an id
// is in the running set exactly while its workflow is stored running), so
// the set's size is the exact count the running limit is checked against,
// in the same atomic step as the write; at the limit the script also drops
// entries of workflows retention expired while they ran.
//
// The rest lives in other slots and is written with separate commands in
// the same pipeline; readers tolerate entries whose workflow is gone:
//
//	twostep:owner:{<id>}         the user of workflow <id>: from an id to its slot
//	twostep:trace:{<traceId>}    the ref of a trace's workflow
//	twostep:{i<n>}:workflows     partition n (of 16) of the admin listing: sorted set of refs
//	twostep:{i<n>}:running       partition n of the running set (the recovery scan): set of refs
//	twostep:{i<n>}:approvals     partition n of the approval index: sorted set of refs of
//	                             workflows awaiting approval, scored by expiresAt (ms)
//	twostep:approvals:indexed    set once the approval index was backfilled (approvals.go)
//
// The deltas of streaming replies (DESIGN §11.3) are not stored: they are
// published on twostep:deltas:{<id>} (Pub/Sub; sharded Pub/Sub on a
// cluster) and handed to the instance's changefeed.DeltaFeed (deltas.go).
//
// A ref is "<id>\x00<u>": the workflow id and its escaped user, which sorts
// as the id does. A workflow's entries go to partition fnv32a(id) mod 16,
// so the store-wide indexes spread over the shards; ListAll merges the
// partitions page by page and Running reads them all. A create first
// claims the id with SET NX on its owner key, so an id names one workflow
// of one user. Readers know a workflow's user from the commit (Commit), the
// ref (listings, the recovery scan, traces) or the owner key, read once per
// id and process and then cached (a user never changes).
//
// On a cluster, Open's client reloads the slot map as soon as a node cannot
// be reached, and the replies of a cluster failing over (CLUSTERDOWN,
// TRYAGAIN, MOVED...) are KindUnavailable, which callers retry. With
// Options.WaitReplicas (set by Open when every master has a replica), the
// writes the API acknowledges wait for a replica (WAIT) before returning,
// so a failover cannot lose them; see durable.go.
//
// With Options.Retention, a workflow's keys, its user's listing and running
// set expire a Retention after the user's last commit, its owner key and
// listing partition a Retention after the workflow's (or, for the
// partition, any of its workflows') last commit, and the trace index
// entries a Retention after they were written. The listings and running
// sets that later commits keep alive would still name expired workflows:
// their readers skip such entries and remove those whose workflow is gone
// for good (state and owner key both gone), so the running partitions,
// which never expire, and the listing partitions do not grow with expired
// workflows.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Defaults of Options.
const (
	DefaultKeyPrefix = "twostep"
	DefaultTraceCap  = 500
)

var (
	_ workflow.Store       = (*Store)(nil)
	_ workflow.RoundLoader = (*Store)(nil)
)

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
	// are deleted. The keys that lead to a workflow from other slots (its
	// owner key, its admin-listing partition) live up to an eighth of it
	// longer (at most 10 minutes), refreshed at most that often, so they
	// always outlive it (see indexCache).
	Retention time.Duration
	// WaitReplicas, when positive, makes every write the API acknowledges
	// (a commit without a fence, a delete, the claim of a new id) wait
	// until that many replicas have it (WAIT), for at most WaitTimeout
	// (DefaultWaitTimeout when zero). Open sets it to 1 on a cluster
	// whose every master has a replica; a negative value turns that off.
	WaitReplicas int
	// WaitTimeout bounds each WAIT.
	WaitTimeout time.Duration
}

// DefaultWaitTimeout bounds the wait for replicas of Options.WaitReplicas.
const DefaultWaitTimeout = time.Second

// clusterStateReload is how often the cluster client reloads its slot map.
const clusterStateReload = 5 * time.Second

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
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	if o.Retention < 0 {
		return o, workflow.Errorf(workflow.KindInvalid, "retention %v is negative", o.Retention)
	}
	return o, nil
}

// Store is the Redis workflow.Store. It is safe for concurrent use.
type Store struct {
	rdb     redis.UniversalClient
	opts    Options
	keys    keys
	owners  owners
	owned   bool // Close closes rdb
	cluster bool // rdb is a cluster client
	// drops are index entries of traces dropped past the cap, deleted by
	// the next pipeline (see tracedrop.go).
	drops dropQueue
	// index remembers the index writes commits need not repeat.
	index indexCache
	// calls keeps the start of each workflow's commit call.
	calls commitCalls
	// hookTurn counts webhook claims: each starts with the next user.
	hookTurn atomic.Uint64
}

// New returns a store over an existing client, which the caller keeps
// owning (Close does not close it); a *redis.ClusterClient makes it a
// cluster store (sharded Pub/Sub for deltas). It panics when opts are invalid (a key
// prefix with braces, a negative retention): that is a programming error.
func New(client redis.UniversalClient, opts Options) *Store {
	o, err := opts.withDefaults()
	if err != nil {
		panic("redisstore.New: " + err.Error())
	}
	_, cluster := client.(*redis.ClusterClient)
	return &Store{rdb: client, opts: o, keys: keys{prefix: o.KeyPrefix}, cluster: cluster}
}

// Open connects to the Redis at url and pings it: an unreachable Redis is
// an error of kind KindUnavailable, a malformed URL KindInvalid. Close
// releases the connections.
//
// url is redis:// or rediss:// (TLS), with an optional user and password
// (an ACL user) and database number. When the node is a Redis Cluster node
// (INFO cluster says cluster_enabled:1), the store uses a cluster client
// seeded with the URL's host and every addr=host:port query parameter
// (ParseClusterURL's form); the first seed that answers decides the mode.
// A cluster has only database 0, so any other database number is a clear
// KindInvalid error, as are addr= seeds naming a node that is not in
// cluster mode.
//
// The client Open makes honours context deadlines (go-redis's
// ContextTimeoutEnabled, on a node and on a cluster): a call whose
// context ends sooner than the client's read timeout gives up then, so
// a frozen Redis answers each call within the caller's own bound (a
// /readyz ping, a commit attempt, a lease renewal) instead of the read
// timeout. A store made with New relies on its caller's client for that.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("redisstore.Open: %w", err)
	}
	seeds, single, err := parseSeeds(url)
	if err != nil {
		// The URL may hold a password: neither the message nor the cause
		// may echo it.
		return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: the Redis URL is malformed: %s", urlProblem(err, url))
	}
	var (
		probe   *redis.Client
		lastErr error
	)
	for _, addr := range seeds {
		// The probe uses database 0: a cluster node refuses SELECT.
		ro := *single
		ro.Addr, ro.DB = addr, 0
		c := redis.NewClient(&ro)
		if lastErr = c.Ping(ctx).Err(); lastErr == nil {
			probe = c
			break
		}
		_ = c.Close()
	}
	if probe == nil {
		return nil, workflow.WrapKind(workflow.KindUnavailable, lastErr, "redisstore.Open: Redis at %s does not answer", strings.Join(seeds, ", "))
	}
	addr := probe.Options().Addr
	if !isClusterNode(ctx, probe) {
		if len(seeds) > 1 {
			_ = probe.Close()
			return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: the Redis URL lists cluster seeds (addr=), but Redis at %s is not a Redis Cluster node", addr)
		}
		client := probe
		if single.DB != 0 {
			_ = probe.Close()
			ro := *single
			ro.Addr = addr
			client = redis.NewClient(&ro)
			if err := client.Ping(ctx).Err(); err != nil {
				_ = client.Close()
				return nil, workflow.WrapKind(workflow.KindUnavailable, err, "redisstore.Open: Redis at %s does not answer", addr)
			}
		}
		return &Store{rdb: client, opts: o, keys: keys{prefix: o.KeyPrefix}, owned: true}, nil
	}
	_ = probe.Close()
	if single.DB != 0 {
		return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: Redis at %s is a Redis Cluster node, which has only database 0; the URL selects database %d", addr, single.DB)
	}
	co, err := redis.ParseClusterURL(url)
	if err != nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "redisstore.Open: the Redis URL is malformed for a Redis Cluster: %s", urlProblem(err, url))
	}
	// The slot map is reloaded every few seconds, and at once when a node
	// cannot be reached, so a promoted replica is found quickly.
	co.ClusterStateReloadInterval = clusterStateReload
	co.ContextTimeoutEnabled = true // as for a node: see parseSeeds
	client := redis.NewClusterClient(co)
	client.AddHook(reloadOnNetworkError{client})
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, workflow.WrapKind(workflow.KindUnavailable, err, "redisstore.Open: the Redis Cluster at %s does not answer", addr)
	}
	if o.WaitReplicas == 0 && mastersHaveReplicas(ctx, client) {
		o.WaitReplicas = 1
	}
	return &Store{rdb: client, opts: o, keys: keys{prefix: o.KeyPrefix}, owned: true, cluster: true}, nil
}

// parseSeeds parses a Redis URL: the options of a client of its first
// host (its addr= parameters taken out, which ParseURL refuses), which
// honours context deadlines, and every seed address, its host first.
func parseSeeds(raw string) (seeds []string, single *redis.Options, err error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	q := u.Query()
	extra := q["addr"]
	q.Del("addr")
	u.RawQuery = q.Encode()
	single, err = redis.ParseURL(u.String())
	if err != nil {
		return nil, nil, err
	}
	// Without it go-redis bounds socket reads and writes by its read and
	// write timeouts alone (5 s) and ignores the context's deadline; no URL
	// parameter sets it.
	single.ContextTimeoutEnabled = true
	seeds = []string{single.Addr}
	for _, a := range extra {
		if h, p, err := net.SplitHostPort(a); err != nil || h == "" || p == "" {
			return nil, nil, fmt.Errorf("addr parameter %q is not host:port", a)
		}
		seeds = append(seeds, a)
	}
	return seeds, single, nil
}

// isClusterNode reports whether INFO cluster says the node runs in cluster
// mode. A node that refuses INFO (an ACL without it) is asked CLUSTER
// MYID, which only a cluster node answers.
func isClusterNode(ctx context.Context, c *redis.Client) bool {
	info, err := c.Info(ctx, "cluster").Result()
	if err == nil {
		return strings.Contains(info, "cluster_enabled:1")
	}
	return c.ClusterMyID(ctx).Err() == nil
}

// Cluster reports whether the store runs on a Redis Cluster.
func (s *Store) Cluster() bool { return s.cluster }

// Close closes the connection Open made; for a store made with New it does
// nothing.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
	defer cancel()
	// Best effort: entries left behind name traces that are gone, which
	// GetTrace answers as not found.
	_ = s.flushDrops(ctx)
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
// script) unless they say the data is passing between nodes (transient),
// anything else means Redis cannot be reached.
func redisErr(err error) error {
	var reply redis.Error
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, redis.Nil):
		return workflow.WrapKind(workflow.KindNotFound, err, "not found")
	case errors.As(err, &reply) && transient(reply.Error()):
		return workflow.WrapKind(workflow.KindUnavailable, err, "redis is failing over")
	case errors.As(err, &reply):
		return workflow.WrapKind(workflow.KindInternal, err, "redis rejected a command")
	}
	return workflow.WrapKind(workflow.KindUnavailable, err, "redis is unavailable")
}

// transientReplies start the error replies of a node that cannot serve a
// command for now — a cluster failing over or resharding (CLUSTERDOWN,
// TRYAGAIN, MOVED and ASK beyond the client's redirects), a replica just
// promoted or still loading (LOADING, READONLY, MASTERDOWN): the command
// may succeed once the cluster settles, so callers retry as through an
// outage instead of failing a round.
var transientReplies = []string{"CLUSTERDOWN", "TRYAGAIN", "MOVED", "ASK", "LOADING", "READONLY", "MASTERDOWN"}

func transient(msg string) bool {
	for _, p := range transientReplies {
		if strings.HasPrefix(msg, p+" ") || msg == p {
			return true
		}
	}
	return false
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
