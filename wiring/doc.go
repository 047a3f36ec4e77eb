// Package wiring builds one gateway process from its configuration: it
// reads Config from the environment and the GATEWAY_CONFIG file
// (LoadConfig), opens the store and the model, and wires the actions
// registry, prompts, modes, engine and HTTP API together (Wire). It is
// importable so that cmd/gateway and the end-to-end tests in test/ run the
// same wiring; it starts nothing and listens on nothing.
package wiring
