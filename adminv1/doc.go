// Package adminv1 holds the wire types of the gateway's /admin/v1 routes:
// the JSON bodies the admin routes answer and accept, with the tags (doc,
// enum, maxLength, …) that shape their part of the OpenAPI document. The
// server (httpapi) converts its domain values to these types at its edge;
// the Go client (client) decodes into them, so both sides read one
// definition, as package apiv1 does for /api/v1.
//
// It imports only the standard library: a client program that uses it
// pulls in no server code. Its type names are the schema names of
// docs/openapi.json (Experiment, Call, Totals, …), which generated
// clients use.
package adminv1
