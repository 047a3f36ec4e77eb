// Package webhooks sends the round events of DESIGN §10.3 as Standard
// Webhooks (https://www.standardwebhooks.com): Source decides, for each
// commit that ends or pauses a round, which deliveries it enters in the
// store's outbox (the workflow's own subscription and the standing ones
// of its user); Deliverer, run on every instance, claims due deliveries
// under a lease, signs and posts them, and reschedules a failed one with
// exponential backoff until a 2xx answers or the retry window (at least
// 24 hours) has passed. CheckURL and the deliverer's dialer keep
// deliveries off private and loopback addresses unless allowed.
package webhooks
