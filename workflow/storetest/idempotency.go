package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// idemStore returns f's store as a workflow.IdempotencyStore: every store
// keeps Idempotency-Key answers.
func idemStore(t *testing.T, f Fixture) workflow.IdempotencyStore {
	t.Helper()
	s, ok := f.Store.(workflow.IdempotencyStore)
	if !ok {
		t.Fatalf("%T does not implement workflow.IdempotencyStore", f.Store)
	}
	return s
}

// testIdempotency follows one key through a claim, a renewal, a refused
// second claimant, a save by a stranger and by the holder, and the replay,
// for users whose keys must never meet.
func testIdempotency(t *testing.T, f Fixture) {
	ctx := context.Background()
	s := idemStore(t, f)
	key := "order-42:{x}*"
	claim := func(user, token string) (workflow.IdempotencyRecord, bool) {
		t.Helper()
		rec, ok, err := s.ClaimIdempotency(ctx, user, key, token, time.Minute)
		must(t, fmt.Sprintf("ClaimIdempotency(%s, %s)", user, token), err)
		return rec, ok
	}
	if _, ok := claim("alice", "t1"); !ok {
		t.Fatal("a free key was not claimed")
	}
	if _, ok := claim("alice", "t1"); !ok {
		t.Error("the holder could not renew its claim")
	}
	rec, ok := claim("alice", "t2")
	if ok || rec.Token != "t1" || rec.Answer != nil {
		t.Errorf("a second claimant got claimed %v, record %+v; want the holder's claim t1", ok, rec)
	}
	for _, user := range []string{"bob", oddUser, oddUserEscaped} {
		if _, ok := claim(user, "t3"); !ok {
			t.Errorf("%s could not claim a key alice holds: keys of users met", user)
		}
	}
	answer := workflow.IdempotentAnswer{
		Hash: "h1", Status: 201,
		Header: map[string][]string{"Content-Type": {"application/json"}, "Location": {"/api/v1/workflows/wf_1"}},
		Body:   []byte(`{"id":"wf_1"}`),
	}
	wantKind(t, "SaveIdempotency by a stranger", s.SaveIdempotency(ctx, "alice", key, "t2", answer, workflow.IdempotencyKeep{Window: time.Hour}), workflow.KindConflict)
	must(t, "ReleaseIdempotency by a stranger", s.ReleaseIdempotency(ctx, "alice", key, "t2"))
	must(t, "SaveIdempotency", s.SaveIdempotency(ctx, "alice", key, "t1", answer, workflow.IdempotencyKeep{Window: time.Hour}))
	must(t, "ReleaseIdempotency of an answer", s.ReleaseIdempotency(ctx, "alice", key, "t1"))
	for _, token := range []string{"t1", "t4"} {
		rec, ok = claim("alice", token)
		if ok {
			t.Fatalf("claim by %s took a key whose answer is kept", token)
		}
		if diff := cmp.Diff(&answer, rec.Answer); diff != "" {
			t.Errorf("replayed answer (-saved +got):\n%s", diff)
		}
	}
	rec.Answer.Body[0], rec.Answer.Header["Location"][0] = 'X', "changed"
	if rec, _ := claim("alice", "t5"); string(rec.Answer.Body) != `{"id":"wf_1"}` || rec.Answer.Header["Location"][0] != "/api/v1/workflows/wf_1" {
		t.Error("changing a returned answer changed the kept one")
	}
	wantKind(t, "SaveIdempotency after the answer", s.SaveIdempotency(ctx, "alice", key, "t1", answer, workflow.IdempotencyKeep{Window: time.Hour}), workflow.KindConflict)
}

// testIdempotencyRelease: a released claim frees the key at once; an
// expired one frees it after its TTL, and its holder can no longer save.
func testIdempotencyRelease(t *testing.T, f Fixture) {
	ctx := context.Background()
	s := idemStore(t, f)
	_, ok, err := s.ClaimIdempotency(ctx, "alice", "k", "t1", time.Minute)
	must(t, "ClaimIdempotency", err)
	if !ok {
		t.Fatal("a free key was not claimed")
	}
	must(t, "ReleaseIdempotency", s.ReleaseIdempotency(ctx, "alice", "k", "t1"))
	if _, ok, err := s.ClaimIdempotency(ctx, "alice", "k", "t2", time.Second); err != nil || !ok {
		t.Fatalf("claim after a release = %v, %v; want claimed", ok, err)
	}
	if f.Advance != nil {
		f.Advance(1100 * time.Millisecond)
	} else {
		time.Sleep(1100 * time.Millisecond)
	}
	if _, ok, err := s.ClaimIdempotency(ctx, "alice", "k", "t3", time.Minute); err != nil || !ok {
		t.Fatalf("claim after the holder's claim expired = %v, %v; want claimed", ok, err)
	}
	err = s.SaveIdempotency(ctx, "alice", "k", "t2", workflow.IdempotentAnswer{Hash: "h", Status: 200}, workflow.IdempotencyKeep{Window: time.Hour})
	wantKind(t, "SaveIdempotency by an expired holder", err, workflow.KindConflict)
	for _, c := range []struct{ user, key, token string }{{"", "k", "t"}, {"alice", "", "t"}, {"alice", "k", ""}} {
		_, _, err := s.ClaimIdempotency(ctx, c.user, c.key, c.token, time.Minute)
		wantKind(t, fmt.Sprintf("ClaimIdempotency(%q, %q, %q)", c.user, c.key, c.token), err, workflow.KindInvalid)
	}
}

// testIdempotencyConcurrent: of many requests claiming one key at once,
// exactly one gets it.
func testIdempotencyConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	s := idemStore(t, f)
	const n = 16
	var wg sync.WaitGroup
	won := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			token := fmt.Sprintf("t%d", i)
			_, ok, err := s.ClaimIdempotency(ctx, "alice", "race", token, time.Minute)
			if err != nil {
				t.Errorf("ClaimIdempotency(%s): %v", token, err)
			}
			if ok {
				won <- token
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []string
	for w := range won {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Errorf("claimed by %v, want exactly one", winners)
	}
}

// testIdempotencyUserBound (issue 45 item 9): a user's kept answers stay
// within the bound they are saved with: past it, the answers that expire
// first are dropped (their keys are free again), another user's are not
// touched, and an answer alone past the bound is refused, keeping nothing.
func testIdempotencyUserBound(t *testing.T, f Fixture) {
	ctx := context.Background()
	s := idemStore(t, f)
	answer := workflow.IdempotentAnswer{Hash: "h", Status: 201, Body: []byte(`{"id":"wf_1"}`)}
	bound := 3 * answer.Size()
	save := func(user, key string, window time.Duration) {
		t.Helper()
		_, ok, err := s.ClaimIdempotency(ctx, user, key, "t-"+key, time.Minute)
		must(t, "ClaimIdempotency", err)
		if !ok {
			t.Fatalf("%s: a free key was not claimed", key)
		}
		must(t, "SaveIdempotency", s.SaveIdempotency(ctx, user, key, "t-"+key, answer, workflow.IdempotencyKeep{Window: window, UserBytes: bound}))
	}
	kept := func(user string, want map[string]bool) {
		t.Helper()
		for key, wantKept := range want {
			rec, claimed, err := s.ClaimIdempotency(ctx, user, key, "probe", time.Minute)
			must(t, "ClaimIdempotency", err)
			if got := !claimed && rec.Answer != nil; got != wantKept {
				t.Errorf("%s %s: kept %v, want %v", user, key, got, wantKept)
			}
			if claimed {
				must(t, "ReleaseIdempotency", s.ReleaseIdempotency(ctx, user, key, "probe"))
			}
		}
	}
	save("other", "o1", time.Hour)
	for i := 1; i <= 5; i++ {
		save("bounded", fmt.Sprintf("k%d", i), time.Hour+time.Duration(i)*time.Minute)
	}
	kept("bounded", map[string]bool{"k1": false, "k2": false, "k3": true, "k4": true, "k5": true})
	// A refused answer, kept minutes, is the first to go.
	save("bounded", "short", 10*time.Minute)
	save("bounded", "k6", 2*time.Hour)
	kept("bounded", map[string]bool{"short": false, "k4": true, "k5": true, "k6": true, "k3": false})
	kept("other", map[string]bool{"o1": true})
	_, _, err := s.ClaimIdempotency(ctx, "bounded", "huge", "t", time.Minute)
	must(t, "ClaimIdempotency", err)
	huge := workflow.IdempotentAnswer{Hash: "h", Status: 201, Body: make([]byte, bound)}
	wantKind(t, "SaveIdempotency past the bound", s.SaveIdempotency(ctx, "bounded", "huge", "t", huge, workflow.IdempotencyKeep{Window: time.Hour, UserBytes: bound}), workflow.KindInvalid)
	kept("bounded", map[string]bool{"k4": true, "k5": true, "k6": true})
}
