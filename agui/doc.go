// Package agui is the gateway's AG-UI 1.0 endpoint (DESIGN §11.3):
// POST /api/v1/agui takes a RunAgentInput and answers a text/event-stream
// of AG-UI events, so chat front ends built on AG-UI clients
// (@ag-ui/client, CopilotKit) drive twostep without glue.
//
// A thread is the client's: the gateway keeps (user, threadId) →
// workflow in the store's idempotency records (threads.go), so every
// instance sharing the store agrees. An unknown thread starts a workflow,
// a known one a round, from the last user message. The run follows the
// round as the workflow event stream does — committed messages from the
// store, the deltas of streaming replies from httpapi's DeltaSource — and
// maps them onto AG-UI events (stream.go). A round that pauses for an
// approval ends the run with an interrupt outcome; the next run's resume
// entry decides it through httpapi.Server.Decide, the approvals route's
// own checks.
//
// The route is mounted on httpapi's API (httpapi.Options.APIMounts), behind
// its authentication, limits and error mapping. Of the project it imports
// httpapi, apiv1, engine and workflow.
package agui
