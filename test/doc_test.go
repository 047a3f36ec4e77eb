// Package test holds twostep's end-to-end and fault tests. They build the
// real gateway binary once, run it on a free loopback port with an
// OpenAI-compatible test server as its model, and drive it over HTTP:
// the happy path, per-user isolation, malformed requests, concurrency,
// startup failures, multi-instance rounds on a shared Redis, the admin
// routes and the admin page in headless Chromium.
package test
