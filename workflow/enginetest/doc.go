// Package enginetest holds hand-written fakes for testing the engine and
// the modes without real actions or a real model: a Registry with a few
// test actions, a scripted Model that records every call, and builders of
// Stage 1 / Stage 2 replies. Nothing here touches the network.
package enginetest
