package redisstore_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

var update = flag.Bool("update", false, "rewrite testdata/layout<current>.json from the fixture")

// fixturePrefix is the key prefix of the fixture's keys.
const fixturePrefix = "fx"

// storedKey is one key of a dump: its type and value (a string, a hash's
// fields, a list in order, a set sorted, a sorted set's scores).
type storedKey struct {
	Type   string             `json:"type"`
	String string             `json:"string,omitempty"`
	Hash   map[string]string  `json:"hash,omitempty"`
	List   []string           `json:"list,omitempty"`
	Set    []string           `json:"set,omitempty"`
	ZSet   map[string]float64 `json:"zset,omitempty"`
}

// TestStoredLayoutsRead loads each testdata/layout<N>.json — every key
// the store wrote for the fixture (fixture_test.go) with layout N, dumped
// from miniredis — and reads it back through the store: every layout a
// store ever wrote keeps reading as the same values. layout0.json holds
// the records as the store wrote them before records had a layout (the
// domain types' json.Marshal). With -update it first rewrites the file of
// the current layout.
func TestStoredLayoutsRead(t *testing.T) {
	if *update {
		writeFixture(t, filepath.Join("testdata", fmt.Sprintf("layout%d.json", redisstore.Layout)))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "layout*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join("testdata", "layout0.json")) ||
		!slices.Contains(files, filepath.Join("testdata", fmt.Sprintf("layout%d.json", redisstore.Layout))) {
		t.Fatalf("testdata has %v: want layout0.json and the current layout's (go test -run TestStoredLayoutsRead -update)", files)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var dump map[string]storedKey
			if err := json.Unmarshal(b, &dump); err != nil {
				t.Fatal(err)
			}
			mr := miniredis.RunT(t)
			load(t, mr, dump)
			client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			checkFixtureReads(t, redisstore.New(client, redisstore.Options{KeyPrefix: fixturePrefix}))
		})
	}
}

// checkFixtureReads reads every value of the fixture through s.
func checkFixtureReads(t *testing.T, s *redisstore.Store) {
	ctx := context.Background()
	same := func(what string, got, want any) {
		t.Helper()
		if d := cmp.Diff(want, got, cmp.AllowUnexported(workflow.StageTable{})); d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	for _, want := range []*workflow.Workflow{fixtureWorkflowA(), fixtureWorkflowB()} {
		got, err := s.GetWorkflow(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		same("GetWorkflow "+want.ID, got, want)
	}
	msgs, err := s.Messages(ctx, fixtureA, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	same("Messages", msgs, fixtureMessagesA())
	traces, err := s.Traces(ctx, fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	same("Traces", traces, fixtureTracesA())
	for _, want := range fixtureTracesA() {
		got, err := s.GetTrace(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		same("GetTrace "+want.ID, got, want)
	}
	for i, want := range fixtureDocs() {
		got, err := s.DocumentContent(ctx, fixtureA, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		want.WorkflowID, want.Size = fixtureA, int64(len(want.Content))
		same(fmt.Sprintf("DocumentContent %d", i), got, want)
	}
	all, _, err := s.ListAll(ctx, workflow.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	same("ListAll", all, []*workflow.Workflow{fixtureWorkflowB(), fixtureWorkflowA()}) // newest (greatest id) first
	bobs, _, err := s.ListWorkflows(ctx, fixtureBob, workflow.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	same("ListWorkflows", bobs, []*workflow.Workflow{fixtureWorkflowB()})
	running, err := s.Running(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same("Running", running, []string{fixtureA})
	sub, err := s.WebhookSubscription(ctx, fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	same("WebhookSubscription", sub, fixtureSubscription())
	hooks, err := s.WebhookDeliveries(ctx, fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	delivery := fixtureDelivery()
	delivery.Secret = "" // WebhookDeliveries clears it
	same("WebhookDeliveries", hooks, []workflow.WebhookDelivery{delivery})
	standing, err := s.ListStanding(ctx, fixtureAlice, fixtureTime(30))
	if err != nil {
		t.Fatal(err)
	}
	same("ListStanding", standing, []workflow.StandingApproval{fixtureStanding()})
	idem, claimed, err := s.ClaimIdempotency(ctx, fixtureAlice, fixtureIdemKey, "tok2", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	answer := fixtureAnswer()
	same("ClaimIdempotency", idem, workflow.IdempotencyRecord{Answer: &answer})
	if claimed {
		t.Error("ClaimIdempotency claimed a key holding an answer")
	}
	exp, err := s.GetExperiment(ctx, fixtureExperiment().ID)
	if err != nil {
		t.Fatal(err)
	}
	same("GetExperiment", exp, fixtureExperiment())
	claim, err := s.ClaimRoundLoad(ctx, fixtureA, "fixture-owner", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	same("ClaimRoundLoad workflow", claim.Workflow, fixtureWorkflowA())
	same("ClaimRoundLoad messages", claim.Messages, fixtureMessagesA())
}

// writeFixture stores the fixture in a new miniredis and dumps every key
// to file.
func writeFixture(t *testing.T, file string) {
	t.Helper()
	ctx := context.Background()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer func() { _ = client.Close() }()
	s := redisstore.New(client, redisstore.Options{KeyPrefix: fixturePrefix})
	commits, appended := fixtureCommits()
	for _, c := range commits {
		if _, _, err := s.Commit(ctx, c); err != nil {
			t.Fatalf("commit %s v%d: %v", c.Workflow.ID, c.ExpectedVersion, err)
		}
	}
	if err := s.AppendTrace(ctx, appended); err != nil {
		t.Fatal(err)
	}
	if err := s.PutStanding(ctx, fixtureStanding()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ClaimIdempotency(ctx, fixtureAlice, fixtureIdemKey, "tok", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveIdempotency(ctx, fixtureAlice, fixtureIdemKey, "tok", fixtureAnswer(), workflow.IdempotencyKeep{Window: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutExperiment(ctx, fixtureExperiment()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dump := map[string]storedKey{}
	for _, k := range mr.Keys() {
		dump[k] = dumpKey(t, mr, k)
	}
	b, err := json.MarshalIndent(dump, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dumpKey reads key k of mr.
func dumpKey(t *testing.T, mr *miniredis.Miniredis, k string) storedKey {
	t.Helper()
	var err error
	sk := storedKey{Type: mr.Type(k)}
	switch sk.Type {
	case "string":
		sk.String, err = mr.Get(k)
	case "hash":
		sk.Hash = map[string]string{}
		fields, _ := mr.HKeys(k)
		for _, f := range fields {
			sk.Hash[f] = mr.HGet(k, f)
		}
	case "list":
		sk.List, err = mr.List(k)
	case "set":
		sk.Set, err = mr.Members(k) // sorted
	case "zset":
		sk.ZSet, err = mr.SortedSet(k)
	default:
		t.Fatalf("key %q has type %q, which the dump does not hold", k, sk.Type)
	}
	if err != nil {
		t.Fatalf("dump %q: %v", k, err)
	}
	return sk
}

// load writes dump into mr.
func load(t *testing.T, mr *miniredis.Miniredis, dump map[string]storedKey) {
	t.Helper()
	var err error
	for k, v := range dump {
		switch v.Type {
		case "string":
			err = mr.Set(k, v.String)
		case "hash":
			for f, val := range v.Hash {
				mr.HSet(k, f, val)
			}
		case "list":
			_, err = mr.Push(k, v.List...)
		case "set":
			_, err = mr.SetAdd(k, v.Set...)
		case "zset":
			for m, score := range v.ZSet {
				if _, err = mr.ZAdd(k, score, m); err != nil {
					break
				}
			}
		default:
			t.Fatalf("key %q has type %q", k, v.Type)
		}
		if err != nil {
			t.Fatalf("load %q: %v", k, err)
		}
	}
}
