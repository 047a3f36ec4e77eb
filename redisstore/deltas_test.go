package redisstore_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// TestDeltaBusAcrossInstances: a delta published on one instance reaches
// the watchers of its workflow on another (and on itself), in order,
// over one Redis; another workflow's watcher hears nothing.
func TestDeltaBusAcrossInstances(t *testing.T) {
	t.Parallel()
	client := realClient(t, redisURL(t))
	testDeltaBus(t, client)
}

// TestDeltaBusOnACluster is the same over sharded Pub/Sub.
func TestDeltaBusOnACluster(t *testing.T) {
	t.Parallel()
	client := clusterClient(t, clusterURL(t))
	testDeltaBus(t, client)
}

func testDeltaBus(t *testing.T, client redis.UniversalClient) {
	prefix := uniquePrefix(t, client)
	running := redisstore.New(client, redisstore.Options{KeyPrefix: prefix}).Deltas()
	watching := redisstore.New(client, redisstore.Options{KeyPrefix: prefix}).Deltas()
	t.Cleanup(func() { _ = running.Close(); _ = watching.Close() })

	id, other := workflow.NewID(workflow.PrefixWorkflow), workflow.NewID(workflow.PrefixWorkflow)
	remote, cancelRemote := watching.SubscribeDeltas(id)
	defer cancelRemote()
	local, cancelLocal := running.SubscribeDeltas(id)
	defer cancelLocal()
	stranger, cancelStranger := watching.SubscribeDeltas(other)
	defer cancelStranger()
	waitFollowing(t, watching, id)
	waitFollowing(t, running, id)

	pieces := []string{"The ", "answer ", "is ", "42."}
	for _, p := range pieces {
		running.PublishDelta(workflow.Delta{WorkflowID: id, UserID: "alice", Round: 2, Step: 3, Stage: workflow.StageTwo, Field: "message", Text: p})
	}
	for name, ch := range map[string]<-chan workflow.Delta{"the other instance": remote, "the publishing instance": local} {
		got := ""
		for range pieces {
			select {
			case d := <-ch:
				if d.Round != 2 || d.Step != 3 || d.Stage != workflow.StageTwo || d.Field != "message" || d.UserID != "alice" {
					t.Errorf("%s: delta %+v lost its round, step, stage, field or user", name, d)
				}
				got += d.Text
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: got %q, then nothing", name, got)
			}
		}
		if got != "The answer is 42." {
			t.Errorf("%s read %q, want the pieces in order", name, got)
		}
	}
	select {
	case d := <-stranger:
		t.Errorf("another workflow's watcher heard %+v", d)
	default:
	}
	if running.Lost() != 0 || watching.Lost() != 0 {
		t.Errorf("lost deltas: %d, %d", running.Lost(), watching.Lost())
	}
}

// waitFollowing waits until bus follows workflowID's channel.
func waitFollowing(t *testing.T, bus *redisstore.DeltaBus, workflowID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !bus.Following(workflowID) {
		select {
		case <-ctx.Done():
			t.Fatalf("never followed %s's deltas", workflowID)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestDeltaBusCloseWaitsForItsReaders: when Close returns, the goroutines
// that read the bus's subscriptions have ended (Close owns them). Not
// parallel: it counts the package's reader goroutines.
func TestDeltaBusCloseWaitsForItsReaders(t *testing.T) {
	client := realClient(t, redisURL(t))
	before := deltaReaders()
	bus := redisstore.New(client, redisstore.Options{KeyPrefix: uniquePrefix(t, client)}).Deltas()
	id := workflow.NewID(workflow.PrefixWorkflow)
	_, cancel := bus.SubscribeDeltas(id)
	defer cancel()
	waitFollowing(t, bus, id)
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if after := deltaReaders(); after != before {
		t.Errorf("%d delta readers run after Close, %d before the bus", after, before)
	}
}

// deltaReaders counts the goroutines reading a delta subscription.
func deltaReaders() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "redisstore.(*follow).read(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
