// Package enginetest holds hand-written fakes for testing the engine and
// the modes without real actions or a real model: a Registry with a few
// test actions and builders of the Stage 1 / Stage 2 replies that an
// scripted.Model model (the one scripted model) answers with. Nothing here
// touches the network.
package enginetest
