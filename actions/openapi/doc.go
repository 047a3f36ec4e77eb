// Package openapi turns the operations of existing REST services, read from
// their OpenAPI documents, into twostep actions (DESIGN §10.2).
//
// Each entry of the YAML openapiActions section names a document (OpenAPI
// 3.0 or 3.1, YAML or JSON, a file or an http(s) URL), loaded and $ref-
// resolved by github.com/getkin/kin-openapi. A Manager guarantees that:
//   - every operation becomes the action <name>.<operationId> (without an
//     id: <name>.<method>_<path words>), described by its summary and
//     description, whose parameters are one JSON Schema object: the path,
//     query and header parameters by name and the JSON request body under
//     "body", every $ref inlined, OpenAPI 3.0's nullable and boolean
//     exclusive bounds written as JSON Schema 2020-12;
//   - an operation it cannot express (a non-JSON request body, a cookie or
//     content-typed parameter, a recursive schema, clashing names) is
//     skipped with a warning naming it; problems of the document itself are
//     reported by Load, every source's at once;
//   - the actions are mounted in the actions registry, which validates and
//     sends each call under http.request's rules (actions.HTTPOperation);
//   - a document fetched from a URL is fetched again every refresh interval;
//     a failed fetch keeps the last good document and Status reports the
//     source as degraded for /readyz.
package openapi
