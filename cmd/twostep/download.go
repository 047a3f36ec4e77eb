package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// cmdDownload is "twostep download": a document's bytes, to stdout or
// to a file (never half-written).
func cmdDownload(ctx context.Context, a *app, name string, args []string) error {
	fs := a.flags(name)
	out := fs.String("o", "", "write to this file (default: stdout)")
	pos, err := parse(fs, args, "ID", "DOC")
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	body, ctype, err := c.Document(ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	defer body.Close()
	if *out == "" || *out == "-" {
		_, err = io.Copy(a.stdout, body)
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out) // no half-written file
		return err
	}
	fmt.Fprintf(a.stderr, "twostep: wrote %d bytes (%s) to %s\n", n, ctype, *out)
	return nil
}
