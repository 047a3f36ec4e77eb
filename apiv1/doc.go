// Package apiv1 holds the wire types of the gateway's /api/v1 routes: the
// JSON bodies the server answers and accepts, with the tags (doc, enum,
// minimum, …) that shape its OpenAPI document. The server (httpapi)
// converts its domain values to these types at its edge; the Go client
// (client) decodes into them, so both sides read one definition.
//
// It imports only the standard library: a client program that uses it
// pulls in no server code. Its type names are the schema names of
// docs/openapi.json (WorkflowView, MessageView, …), which generated
// clients use.
package apiv1
