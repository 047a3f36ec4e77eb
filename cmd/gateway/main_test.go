package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/twostep/twostep/wiring"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestRealMainCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		out     string
		wantErr string
	}{
		{[]string{"version"}, "twostep gateway ", ""},
		{[]string{"help"}, "usage: gateway", ""},
		{[]string{"demo", "--help"}, "usage: gateway", ""},
		{[]string{"serve", "-h"}, "usage: gateway", ""},
		{[]string{"bogus"}, "", `unknown command "bogus"`},
		{[]string{"version", "extra"}, "", "takes no arguments"},
		{nil, "", "no tokens configured"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := realMain(context.Background(), tt.args, envOf(map[string]string{"OPENAI_API_KEY": "k"}), &stdout, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(stdout.String(), tt.out) {
				t.Errorf("out %q err %v", stdout.String(), err)
			}
		})
	}
}

// TestDemoGolden runs the demo and compares its output with
// testdata/demo.golden, ids, prompt sizes and token counts
// masked. Run with -update after an intended change.
func TestDemoGolden(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := realMain(context.Background(), []string{"demo"}, envOf(nil), &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	got := regexp.MustCompile(`wf_[0-9a-z]+`).ReplaceAllString(stdout.String(), "wf_ID")
	// Prompt sizes and token counts follow the templates: mask them.
	got = regexp.MustCompile(`prompt [0-9]+ chars beside stage 1's [0-9]+ \([0-9]+%\)`).ReplaceAllString(got, "prompt N chars beside stage 1's N (N%)")
	got = regexp.MustCompile(`[0-9]+ prompt \+ [0-9]+ completion tokens`).ReplaceAllString(got, "N prompt + N completion tokens")
	path := filepath.Join("testdata", "demo.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("demo output differs from %s (-update to accept):\n%s", path, got)
	}
}

// TestDemoVerboseShowsHistoryNewestFirst: demo -v prints the history each
// Stage 1 prompt rendered, and in the last step it lists step 2, then step
// 1, then the user's message: newest first, as the model saw it.
func TestDemoVerboseShowsHistoryNewestFirst(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := realMain(context.Background(), []string{"demo", "-v"}, envOf(nil), &stdout, &stderr); err != nil {
		t.Fatalf("demo -v: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if n := strings.Count(out, "stage 1 saw this history (newest first):"); n != 3 {
		t.Fatalf("%d history sections, want one per step (3):\n%s", n, out)
	}
	last := out[strings.LastIndex(out, "stage 1 saw this history"):]
	i2, i1, iu := strings.Index(last, "| - [round 1, step 2]"), strings.Index(last, "| - [round 1, step 1]"), strings.Index(last, "| - [round 1] user")
	if i2 < 0 || i1 < 0 || iu < 0 || i2 > i1 || i1 > iu {
		t.Errorf("step 3's history is not newest first (step 2 at %d, step 1 at %d, user at %d):\n%s", i2, i1, iu, last)
	}
	if err := realMain(context.Background(), []string{"demo", "-x"}, envOf(nil), &stdout, &stderr); err == nil {
		t.Error("demo -x was accepted")
	}
}

// envOf serves m as the process environment.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestUsageListsEveryVariable: gateway --help names every environment
// variable the configuration reads.
func TestUsageListsEveryVariable(t *testing.T) {
	t.Parallel()
	for f := range reflect.TypeFor[wiring.Config]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !strings.Contains(usage, name) {
			t.Errorf("usage does not name %s", name)
		}
	}
}
