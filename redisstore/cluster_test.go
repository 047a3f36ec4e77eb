package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// TestOpenCluster opens the store on the Redis Cluster at
// REDIS_CLUSTER_URL in the ways an operator writes the URL: every seed,
// one seed (the cluster client learns the rest), a first seed that is
// down, an ACL user; and refuses a database number, which a cluster does
// not have.
func TestOpenCluster(t *testing.T) {
	t.Parallel()
	url := clusterURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seeds, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatal(err)
	}
	first := "redis://" + seeds.Addrs[0]
	dead := "127.0.0.1:" + fmt.Sprint(freePort(t))
	rest := ""
	for _, a := range seeds.Addrs {
		rest += "&addr=" + a
	}
	for _, u := range []string{url, first, "redis://" + dead + "?" + rest[1:]} {
		s, err := redisstore.Open(ctx, u, redisstore.Options{KeyPrefix: uniquePrefix(t, clusterClient(t, url))})
		if err != nil {
			t.Fatalf("Open(%s): %v", u, err)
		}
		if !s.Cluster() {
			t.Errorf("Open(%s) did not detect the cluster", u)
		}
		// Workflows of several users land in several slots, and on
		// several shards: each create and read must reach the right one.
		for i := range 6 {
			wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: fmt.Sprintf("user-%d", i), Status: workflow.StatusRunning}
			if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, RunningLimit: 1}); err != nil {
				t.Fatalf("Open(%s): Commit: %v", u, err)
			}
			if got, err := s.GetWorkflow(ctx, wf.ID); err != nil || got.UserID != wf.UserID {
				t.Errorf("Open(%s): GetWorkflow = %v, %v", u, got, err)
			}
		}
		_ = s.Close()
	}

	// An ACL user, as a managed cluster gives one: the probe and the
	// cluster client both authenticate (the user exists on every node).
	admin := clusterClient(t, url)
	const aclUser, aclPass = "twostep-acl-test", "acl-pass-5f1c9e"
	err = admin.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		return node.Do(ctx, "acl", "setuser", aclUser, "reset", "on", ">"+aclPass, "~*", "&*", "+@all").Err()
	})
	if err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		_ = admin.ForEachShard(context.Background(), func(ctx context.Context, node *redis.Client) error {
			return node.Do(ctx, "acl", "deluser", aclUser).Err()
		})
	})
	aclURL := "redis://" + aclUser + ":" + aclPass + "@" + strings.TrimPrefix(url, "redis://")
	s, err := redisstore.Open(ctx, aclURL, redisstore.Options{KeyPrefix: uniquePrefix(t, admin)})
	if err != nil {
		t.Fatalf("Open(cluster, ACL user): %v", err)
	}
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "acl", Status: workflow.StatusCompleted}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Errorf("Commit as an ACL user: %v", err)
	}
	_ = s.Close()
	bad := "redis://" + aclUser + ":wrong@" + strings.TrimPrefix(url, "redis://")
	if s, err := redisstore.Open(ctx, bad, redisstore.Options{}); err == nil {
		_ = s.Close()
		t.Error("Open with a wrong ACL password succeeded")
	} else if strings.Contains(err.Error(), "wrong@") {
		t.Errorf("the error quotes the URL: %v", err)
	}

	_, err = redisstore.Open(ctx, first+"/3", redisstore.Options{})
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "database 3") {
		t.Errorf("Open(cluster, database 3) = %v (kind %q), want a KindInvalid error naming the database", err, workflow.KindOf(err))
	}
}

// TestOpenSeedsOfASingleNode: addr= seeds say the operator means a
// cluster; a URL whose node is a single Redis is refused at start-up
// rather than used as something it is not.
func TestOpenSeedsOfASingleNode(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	s, err := redisstore.Open(context.Background(), "redis://"+mr.Addr()+"?addr="+mr.Addr(), redisstore.Options{})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open accepted cluster seeds naming a single node")
	}
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "not a Redis Cluster node") {
		t.Errorf("Open = %v (kind %q), want a KindInvalid error saying the node is not a cluster node", err, workflow.KindOf(err))
	}
	s, err = redisstore.Open(context.Background(), "redis://"+mr.Addr()+"?addr=nohost", redisstore.Options{})
	if err == nil {
		_ = s.Close()
	}
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("Open with a malformed addr= = %v, want KindInvalid", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
