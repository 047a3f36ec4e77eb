package agui

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// writer writes AG-UI events as SSE data lines, each flushed and bounded
// in time (a client that stops reading ends the run's stream, never the
// round).
type writer struct {
	w    io.Writer
	wait time.Duration
	last time.Time
}

// send writes e with its timestamp.
func (o *writer) send(e Event) error {
	e.Timestamp = time.Now().UnixMilli()
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return o.frame("data: " + string(data) + "\n\n")
}

// heartbeat writes an SSE comment when nothing was written for d.
func (o *writer) heartbeat(d time.Duration) error {
	if time.Since(o.last) < d {
		return nil
	}
	return o.frame(": heartbeat\n\n")
}

func (o *writer) frame(s string) error {
	if rw, ok := o.w.(http.ResponseWriter); ok && o.wait > 0 {
		_ = http.NewResponseController(rw).SetWriteDeadline(time.Now().Add(o.wait))
	}
	if _, err := io.WriteString(o.w, s); err != nil {
		return err
	}
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
	o.last = time.Now()
	return nil
}

// eventsSchema describes the stream for the OpenAPI document as the
// workflow event stream's is described: an array of frames, each with
// an AG-UI event as its data.
func eventsSchema(api huma.API) *huma.Schema {
	event := api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(Event{}), true, "AGUIEvent")
	return &huma.Schema{
		Type: "array", Title: "AG-UI events",
		Description: "Each item is one SSE frame: `data:` an AG-UI event, its kind in type",
		Items:       &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{"data": event}, Required: []string{"data"}},
	}
}
