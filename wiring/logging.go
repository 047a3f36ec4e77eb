package wiring

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/redact"
)

// NewLogger returns the process logger: JSON lines by default, a
// human-readable console format with LOG_FORMAT=console. Callers carry it
// in contexts (zerolog.Ctx); there is no global logger.
//
// Every line goes through redact.Writer with the redactor in scrub (nil:
// none), so a secret that reaches a log field (an upstream's error text, a
// library's message) is scrubbed like action output; serve stores the
// gateway's redactor there once it is built.
func NewLogger(w io.Writer, format, level string, scrub *atomic.Pointer[redact.Redactor]) (zerolog.Logger, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	if scrub != nil {
		w = redact.Writer(w, scrub)
	}
	if strings.EqualFold(format, "console") {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).Hook(timeHook{}).With().Str("service", "twostep-gateway").Logger(), nil
}

// LogTimeFormat is the layout of a log line's "time" field: RFC 3339 with
// milliseconds, so the lines of several instances can be put in order
// (zerolog's own Timestamp has whole seconds unless its global format is
// changed).
const LogTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// timeHook adds the "time" field to every line.
type timeHook struct{}

func (timeHook) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().Format(LogTimeFormat))
}

func parseLevel(s string) (zerolog.Level, error) {
	if s == "" {
		return zerolog.InfoLevel, nil
	}
	lvl, err := zerolog.ParseLevel(strings.ToLower(s))
	if err != nil || lvl == zerolog.NoLevel {
		return zerolog.InfoLevel, fmt.Errorf("unknown level %q (use trace, debug, info, warn, error)", s)
	}
	return lvl, nil
}

// redisLogger routes go-redis's internal log lines (dial retries, pool
// notices) into the gateway's logger at debug level, so a failed start
// prints one clear error line instead of the client's retry chatter.
type redisLogger struct{ log zerolog.Logger }

func (r redisLogger) Printf(_ context.Context, format string, v ...any) {
	r.log.Debug().Str("component", "redis").Msg(fmt.Sprintf(format, v...))
}
