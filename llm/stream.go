package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// streamTap hands a streamed reply's pieces to the request's Stream as the
// provider client reads them (DESIGN §11.2). langchaingo v0.1.14 parses the
// stream itself (usage, cached tokens, finish reason and the whole reply
// come from it) but hands a streaming function neither Anthropic's tool
// arguments nor OpenAI's raw argument text, so the transport reads the
// same bytes on their way to it: one parser per wire format, and the
// pieces are exactly the reply's text (or the forced tool's arguments).
type streamTap struct {
	anthropic bool // Anthropic's events, else OpenAI-compatible chunks
	tool      bool // the reply is the forced tool call's arguments

	mu       sync.Mutex
	emit     func(string)
	stopped  bool
	streamed bool // a piece was handed over
	// unstreamed is set when the server answered the streamed request
	// with a whole reply: it is handed over as one stream.
	unstreamed bool
}

// piece hands s to the request's Stream unless the attempt is over.
func (t *streamTap) piece(s string) {
	if s == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.streamed = true
	t.emit(s)
}

// stop ends the attempt: no piece is handed over after it returns (the
// client's reader goroutine may still be draining the body).
func (t *streamTap) stop() (streamed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	return t.streamed
}

type streamTapKey struct{}

func withStreamTap(ctx context.Context, t *streamTap) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, streamTapKey{}, t)
}

func streamTapOf(ctx context.Context) *streamTap {
	t, _ := ctx.Value(streamTapKey{}).(*streamTap)
	return t
}

// tapResponse puts the tap on a successful reply's body: an event stream
// is read as it passes; a whole JSON reply (a server that does not
// stream) is turned into the event stream the client expects, and read
// the same way.
func (t *streamTap) tapResponse(resp *http.Response) {
	if resp.StatusCode != http.StatusOK || resp.Body == nil {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxPatchedBody))
		resp.Body.Close()
		events, ok := t.asEvents(raw)
		if err != nil || !ok {
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			return
		}
		t.mu.Lock()
		t.unstreamed = true
		t.mu.Unlock()
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.ContentLength = int64(len(events))
		resp.Body = io.NopCloser(bytes.NewReader(events))
	}
	resp.Body = &tapReader{body: resp.Body, tap: t}
}

// tapReader reads an event stream's data lines as the client reads them.
type tapReader struct {
	body io.ReadCloser
	tap  *streamTap
	line []byte // the line read so far
}

// maxTapLine bounds the line the tap keeps; a longer one (no event of a
// chat stream is) is not read for pieces.
const maxTapLine = 1 << 20

func (r *tapReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			if len(r.line) <= maxTapLine {
				r.line = append(r.line, c)
			}
			continue
		}
		r.dataLine(bytes.TrimRight(r.line, "\r"))
		r.line = r.line[:0]
	}
	return n, err
}

func (r *tapReader) Close() error { return r.body.Close() }

// dataLine reads one line of the stream.
func (r *tapReader) dataLine(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if r.tap.anthropic {
		r.tap.piece(anthropicPiece(data, r.tap.tool))
	} else {
		r.tap.piece(openAIPiece(data, r.tap.tool))
	}
}

// openAIPiece is the reply text a chat.completion.chunk carries: the
// content, or in tool mode the tool call's argument text.
func openAIPiece(data []byte, tool bool) string {
	var ev struct {
		Choices []struct {
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct {
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &ev) != nil || len(ev.Choices) == 0 {
		return ""
	}
	d := ev.Choices[0].Delta
	if !tool {
		return d.Content
	}
	var b []byte
	for _, c := range d.ToolCalls {
		b = append(b, c.Function.Arguments...)
	}
	return string(b)
}

// anthropicPiece is the reply text a Messages API event carries: a text
// delta, or in tool mode the tool input's partial JSON.
func anthropicPiece(data []byte, tool bool) string {
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "content_block_delta" {
		return ""
	}
	switch {
	case tool && ev.Delta.Type == "input_json_delta":
		return ev.Delta.PartialJSON
	case !tool && ev.Delta.Type == "text_delta":
		return ev.Delta.Text
	}
	return ""
}

// tap returns the stream tap of an attempt at req in plan, nil when the
// attempt is not streamed.
func (m *Model) tap(req workflow.ModelRequest, plan outputPlan, stream bool) *streamTap {
	if !stream {
		return nil
	}
	return &streamTap{anthropic: m.provider == ProviderAnthropic, tool: plan.tool != "", emit: req.Stream}
}

// ignoreChunk is the streaming function langchaingo needs to stream: the
// pieces reach the request's Stream through the tap instead.
func ignoreChunk(context.Context, []byte) error { return nil }

// streamed logs how an answered attempt streamed: a server that refused
// the streamed request (refused) is remembered, so this Model's later
// calls are sent unstreamed; one that answered it whole is not (it costs
// nothing: the tap turned the reply into a stream).
func (m *Model) streamed(ctx context.Context, req workflow.ModelRequest, tap *streamTap, refused bool) {
	log := zerolog.Ctx(ctx)
	if refused && m.unstreamed.CompareAndSwap(false, true) {
		log.Warn().Str("model", m.Name()).Str("stage", string(req.Stage)).
			Msg("the server refused a streamed call and answered it unstreamed; this model's calls are sent unstreamed from now on")
	}
	if tap == nil {
		return
	}
	tap.mu.Lock()
	whole := tap.unstreamed
	tap.mu.Unlock()
	if whole {
		log.Debug().Str("model", m.Name()).Str("stage", string(req.Stage)).Msg("the server answered a streamed call whole")
	}
}
