package redisstore

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// ownerCacheSize bounds the owners cache: about 100 bytes an entry.
const ownerCacheSize = 1 << 16

// owners caches the user of each workflow id this process has seen. A
// workflow never changes its user, so an entry is true for as long as the
// workflow exists; only an id deleted and created again by another user
// (ids are random, so only a caller choosing ids can do that) makes one
// wrong, and every reader that finds nothing in a cached user's slot asks
// Redis again (see inSlot). When full, an arbitrary entry makes room.
type owners struct {
	mu sync.Mutex
	m  map[string]string
}

func (o *owners) get(id string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	u, ok := o.m[id]
	return u, ok
}

func (o *owners) put(id, userID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[string]string)
	}
	if _, ok := o.m[id]; !ok && len(o.m) >= ownerCacheSize {
		for k := range o.m {
			delete(o.m, k)
			break
		}
	}
	o.m[id] = userID
}

func (o *owners) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, id)
}

// ownerOf returns the user of workflow id: from the cache (cached = true)
// or from the owner key. KindNotFound when no workflow has the id.
func (s *Store) ownerOf(ctx context.Context, id string) (userID string, cached bool, err error) {
	if u, ok := s.owners.get(id); ok {
		return u, true, nil
	}
	u, err := s.rdb.Get(ctx, s.keys.owner(id)).Result()
	if errors.Is(err, redis.Nil) || (err == nil && u == "") {
		return "", false, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	if err != nil {
		return "", false, redisErr(err)
	}
	s.owners.put(id, u)
	return u, false, nil
}

// inSlot runs op with the user of workflow id, whose slot holds the
// workflow's keys; op reports whether it found the workflow there. When it
// did not and the user came from the cache, the owner key is read again
// and, should it name another user, op runs once more in that user's slot.
// found is false when the workflow does not exist (op's error aside).
func (s *Store) inSlot(ctx context.Context, id string, op func(userID string) (found bool, err error)) (found bool, err error) {
	userID, cached, err := s.ownerOf(ctx, id)
	if err != nil {
		if workflow.KindOf(err) == workflow.KindNotFound {
			return false, nil
		}
		return false, err
	}
	found, err = op(userID)
	if err != nil || found || !cached {
		return found, err
	}
	s.owners.forget(id)
	again, _, err := s.ownerOf(ctx, id)
	if err != nil {
		if workflow.KindOf(err) == workflow.KindNotFound {
			return false, nil
		}
		return false, err
	}
	if again == userID {
		return false, nil
	}
	return op(again)
}
