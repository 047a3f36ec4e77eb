package wiring

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLogLinesHaveMillisecondTimes: every JSON line carries a "time" with
// milliseconds (the order of several instances' lines depends on it), the
// service name, the level and the message; the console format still shows
// the time of day.
func TestLogLinesHaveMillisecondTimes(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "json", "debug", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Truncate(time.Millisecond)
	log.Info().Str("workflow", "wf_1").Msg("round taken over")
	after := time.Now()
	var line struct {
		Time, Level, Service, Workflow, Message string
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	at, err := time.Parse(LogTimeFormat, line.Time)
	if err != nil {
		t.Fatalf("time %q: %v", line.Time, err)
	}
	if !strings.Contains(line.Time, ".") || at.Before(before) || at.After(after) {
		t.Errorf("time %q is not the moment of logging with milliseconds (between %v and %v)", line.Time, before, after)
	}
	if line.Level != "info" || line.Service != "twostep-gateway" || line.Workflow != "wf_1" || line.Message != "round taken over" {
		t.Errorf("line %+v", line)
	}

	buf.Reset()
	console, err := NewLogger(&buf, "console", "info", nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Format("15:04")
	console.Info().Msg("hello")
	to := time.Now().Format("15:04")
	if got := buf.String(); !(strings.Contains(got, from) || strings.Contains(got, to)) || !strings.Contains(got, "hello") {
		t.Errorf("console line %q lacks the time of day %s or the message", got, to)
	}
}
