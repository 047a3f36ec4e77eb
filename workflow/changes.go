package workflow

// Change is what a watcher of a workflow learns when this process commits
// it: which workflow changed and, when the commit ended a round, the
// workflow as the round ended.
type Change struct {
	// WorkflowID names the workflow committed.
	WorkflowID string
	// Ended is set when the commit ended a round (any status but running
	// or awaiting approval): the workflow as the round ended. A commit that
	// ends a round and starts a queued one in the same step carries the
	// ended round here, while the store already shows the next one.
	Ended *Workflow
	// Messages, with Ended, are the workflow's messages as the round's run
	// held them (all of them, in seq order, in their stored form); nil when
	// no run handed them over (a round ended by Stop).
	Messages []Message
}

// Changes is the change-notification service: the engine publishes every
// commit it makes; requests waiting for a round (Prefer: wait), event
// streams and tests subscribe to the workflows they watch.
//
// It is in-process: commits made by other instances sharing the store are
// not published here, so a watcher that must see them also reads the
// store now and then (the store is the truth; a change only says "read
// now"). Implementations are safe for concurrent use.
type Changes interface {
	// Publish tells the subscribers of c.WorkflowID. It never blocks. c's
	// Ended and Messages are shared with every subscriber: nobody may
	// modify them.
	Publish(c Change)
	// Subscribe returns a channel that receives the changes of workflowID
	// published after it, and the function that ends the subscription
	// (the caller must call it). A subscriber that falls behind does not
	// hold up Publish: it finds one pending change, the latest, which
	// keeps the Ended and Messages of an earlier pending one when it has
	// none of its own.
	Subscribe(workflowID string) (changes <-chan Change, cancel func())
}
