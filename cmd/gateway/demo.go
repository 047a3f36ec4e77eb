package main

import (
	"context"
	"io"

	"github.com/twostep/twostep/wiring"
)

// demo runs the sample workflow offline through the real engine, actions
// and memory store, and prints every step (wiring.RunDemo); verbose adds
// the history each Stage 1 prompt rendered.
func demo(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, verbose bool) error {
	level := getenv("LOG_LEVEL")
	if level == "" {
		level = "warn"
	}
	log, err := wiring.NewLogger(stderr, "console", level, nil)
	if err != nil {
		return err
	}
	return wiring.RunDemo(ctx, log, stdout, verbose)
}
