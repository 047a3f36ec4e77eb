package upload

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestReadBufferSize: a body of known small length is read with a buffer
// its size, not 64 KiB; an unknown or large one with the 64 KiB buffer.
func TestReadBufferSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		length int64
		want   int
	}{
		{-1, maxReadBuffer},
		{0, 1},
		{60, 61},
		{maxReadBuffer - 1, maxReadBuffer},
		{maxReadBuffer, maxReadBuffer},
		{32 << 20, maxReadBuffer},
	} {
		if got := readBufferSize(tt.length); got != tt.want {
			t.Errorf("readBufferSize(%d) = %d, want %d", tt.length, got, tt.want)
		}
	}
}

// TestTinyDocumentsHoldTinyBuffers: without a Content-Length, documents
// are decoded into buffers that grow with what arrives, so twenty tiny
// documents hold a few bytes each, not 64 KiB; the 21st stops the read.
func TestTinyDocumentsHoldTinyBuffers(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"prompt":"p","documents":[`)
	for i := range 21 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"a%d","content":"eA=="}`, i)
	}
	b.WriteString("]}")
	tr := &transcoder{in: bufio.NewReader(strings.NewReader(b.String())), limits: Limits{MaxDocumentBytes: 10 << 20},
		length: -1, stash: &Stash{docs: map[int]*doc{}}, maxDocs: 20}
	var shape *ShapeError
	if err := tr.run(); !errors.As(err, &shape) || shape.Location != "body.documents" {
		t.Fatalf("run() = %v, want the document limit", err)
	}
	total := 0
	for i, d := range tr.stash.docs {
		if string(d.content) != "x" {
			t.Errorf("document %d = %q", i, d.content)
		}
		total += cap(d.content)
	}
	if len(tr.stash.docs) != 20 || total > 20*16 {
		t.Errorf("%d documents hold %d bytes of buffers", len(tr.stash.docs), total)
	}
}
