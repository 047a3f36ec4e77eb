package client_test

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/client"
)

// TestReadEvents decodes a recorded stream: ids, a data line split in two,
// comments (keep-alives) and an unknown event type; a message whose data
// is not JSON ends the sequence with an error naming the event type.
func TestReadEvents(t *testing.T) {
	t.Parallel()
	stream := ": keep-alive\n\n" +
		"id: 1\nevent: message\ndata: {\"seq\":1,\n" + "data: \"role\":\"user\",\"text\":\"hi\"}\n\n" +
		"event: status\ndata: {\"id\":\"wf_1\",\"status\":\"running\"}\n\n" +
		"event: future\ndata: {\"x\":1}\n\n" +
		"event: deleted\n\n" +
		"id: 2\nevent: message\ndata: not json\n\n" +
		"id: 3\nevent: message\ndata: {}\n\n"
	var got []string
	var last error
	for ev, err := range client.ReadEvents(strings.NewReader(stream)) {
		if err != nil {
			last = err
			continue
		}
		s := ev.Type + "#" + ev.ID
		switch ev.Type {
		case "message":
			s += ":" + ev.Message.Role + ":" + ev.Message.Text
		case "status":
			s += ":" + ev.Workflow.Status
		case "future":
			s += ":" + string(ev.Data)
		}
		got = append(got, s)
	}
	want := "message#1:user:hi,status#:running,future#:{\"x\":1},deleted#"
	if strings.Join(got, ",") != want {
		t.Errorf("events = %s\nwant     %s", strings.Join(got, ","), want)
	}
	if last == nil || !strings.Contains(last.Error(), "message event is not JSON") {
		t.Errorf("the bad message ended the stream with %v", last)
	}
}
