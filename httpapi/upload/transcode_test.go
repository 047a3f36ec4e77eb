package upload

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// transcode runs the body stream over raw as the upload routes do.
func transcode(t testing.TB, raw []byte, limits Limits) (*transcoder, error) {
	t.Helper()
	tr := &transcoder{in: bufio.NewReaderSize(bytes.NewReader(raw), 16), limits: limits,
		length: int64(len(raw)), stash: &Stash{docs: map[int]*doc{}}}
	return tr, tr.run()
}

// createBody is the shape of an upload body (httpapi's create body).
type createBody struct {
	Prompt    string `json:"prompt"`
	Mode      string `json:"mode"`
	MaxSteps  int    `json:"maxSteps"`
	Documents []struct {
		Name     string `json:"name"`
		MimeType string `json:"mimeType"`
		Content  string `json:"content"`
	} `json:"documents"`
}

// checkSameAsBefore is the property of the body stream: encoding/json
// accepts the transcoded body exactly when it accepts the original, reads
// the same fields, and every document decodes to the same bytes, the same
// base64 verdict and the same size verdict as decoding the original's
// strings did.
func checkSameAsBefore(t *testing.T, raw []byte) {
	t.Helper()
	limits := Limits{MaxDocumentBytes: 5000}
	tr, err := transcode(t, raw, limits)
	if err != nil {
		t.Fatalf("transcode(%q): %v", raw, err)
	}
	var before, after createBody
	errBefore := json.Unmarshal(raw, &before)
	errAfter := json.Unmarshal(tr.out.Bytes(), &after)
	if (errBefore == nil) != (errAfter == nil) {
		t.Fatalf("%q: encoding/json said %v before, %v after (transcoded %q)", raw, errBefore, errAfter, tr.out.Bytes())
	}
	if errBefore != nil {
		return
	}
	if before.Prompt != after.Prompt || before.Mode != after.Mode || before.MaxSteps != after.MaxSteps || len(before.Documents) != len(after.Documents) {
		t.Fatalf("%q: fields differ: %+v vs %+v", raw, before, after)
	}
	for i := range before.Documents {
		if before.Documents[i].Name != after.Documents[i].Name || before.Documents[i].MimeType != after.Documents[i].MimeType {
			t.Errorf("%q: document %d name/type differ", raw, i)
		}
		wantC, wantP, wantBig := (*Stash)(nil).Content(i, before.Documents[i].Content, limits.MaxDocumentBytes)
		gotC, gotP, gotBig := tr.stash.Content(i, after.Documents[i].Content, limits.MaxDocumentBytes)
		if !bytes.Equal(wantC, gotC) || (wantP == "") != (gotP == "") || wantBig != gotBig {
			t.Errorf("%q: document %d: before %q/%q/%v, streamed %q/%q/%v", raw, i, wantC, wantP, wantBig, gotC, gotP, gotBig)
		}
	}
}

var transcodeSeeds = []string{
	`{"prompt":"p","documents":[{"name":"a.txt","content":"aGVsbG8="}]}`,
	` { "prompt" : "p" , "documents" : [ { "content" : "aGVsbG8=" , "name" : "a" } , {"name":"b","content":""} ] } `,
	`{"prompt":"p","documents":[{"name":"a","content":"aGVs\/bG8="}]}`,    // PHP's escaped slash
	`{"prompt":"p","documents":[{"name":"a","content":"\u0061GVsbG8="}]}`, // \u escape
	`{"prompt":"p","documents":[{"name":"a","content":"aGVs\nbG8="}]}`,    // raw newline: invalid JSON
	`{"prompt":"p","documents":[{"name":"a","content":"aGVs\\nbG8="}]}`,   // escaped newline: ignored by base64
	`{"prompt":"p","documents":[{"name":"a","content":"aGVs\x"}]}`,        // bad escape
	`{"prompt":"p","documents":[{"name":"a","content":"-_-_"}]}`,          // URL-safe alphabet
	`{"prompt":"p","documents":[{"name":"a","content":"AA==AAAA"}]}`,      // padding inside
	`{"prompt":"p","documents":[{"name":"a","content":"AAA"}]}`,           // short
	`{"prompt":"p","documents":[{"name":"a","content":"aGVsbG8=","content":"eA=="}]}`,
	`{"documents":[{"name":"a","content":"eA=="}],"prompt":"p","documents":[{"name":"b","content":"eQ=="}]}`,
	`{"prompt":"p","documents":[{"name":"a","content":null}]}`,
	`{"prompt":"p","documents":[{"name":"a","content":5}]}`,
	`{"prompt":"p","documents":"x"}`,
	`{"prompt":"p","documents":[1,{"name":"a","content":"eA=="},[2]]}`,
	`{"prompt":"p","documents":[{"name":"a","con\u0074ent":"eA=="}]}`,
	`{"prompt":"p","x":{"documents":[{"content":"eA=="}]},"documents":[]}`,
	`{"prompt":"[{\"content\":\"eA==\"}]","documents":[]}`,
	`{"prompt":"p","documents":[{"name":"a","content":"eA=="}`, // truncated
	`{"prompt":"p","documents":[{"name":"a","content":"eA==`,   // truncated in content
	`{"prompt":"p",,"documents":[]}`,
	`{"prompt":"p","documents":[{"name":"a","content":"eA=="}]} trailing`,
	`[{"prompt":"p"}]`,
	`{"prompt":"p","maxSteps":3,"mode":"react","documents":[{"name":"a","content":"` + strings.Repeat("QUJD", 1300) + `"}]}`, // 3900 bytes, several blocks
	`{"prompt":"p","documents":[{"name":"a","content":"` + strings.Repeat("QUJD", 1700) + `"}]}`,                             // over the limit
	`{"prompt":"p","documents":[{"name":"a","content":"` + strings.Repeat("QUJD", 1024) + `QQ==" }]}`,
	`{"prompt":"p","documents":[{"name":"a","content":"` + strings.Repeat("QUJD", 1023) + `QQ==QUJD"}]}`, // padding at a block's end
	``,
	`{}`,
}

func TestTranscoderMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range transcodeSeeds {
		checkSameAsBefore(t, []byte(s))
	}
}

func FuzzTranscoder(f *testing.F) {
	for _, s := range transcodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkSameAsBefore(t, raw) })
}

// TestTranscoderDeepNesting: brackets nested a million deep in a field the
// stream does not look into are copied without recursion.
func TestTranscoderDeepNesting(t *testing.T) {
	t.Parallel()
	raw := `{"prompt":"p","x":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `,"documents":[{"name":"a","content":"eA=="}]}`
	tr, err := transcode(t, []byte(raw), Limits{MaxDocumentBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := tr.stash.docs[0]; d == nil || string(d.content) != "x" {
		t.Errorf("document after deep nesting = %+v", d)
	}
}

// multiDocBody is a create body with n documents of size bytes each.
func multiDocBody(n, size int) ([]byte, [][]byte) {
	var b bytes.Buffer
	b.WriteString(`{"prompt":"p","documents":[`)
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = bytes.Repeat([]byte{byte('a' + i)}, size)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"d` + string(rune('a'+i)) + `","content":"` + base64.StdEncoding.EncodeToString(docs[i]) + `"}`)
	}
	b.WriteString("]}")
	return b.Bytes(), docs
}

// TestTranscoderOneBufferForAllDocuments: with a Content-Length, every
// document is decoded into one buffer no larger than 3/4 of the body,
// back to back, each capped at its own length so that appending to one
// cannot overwrite the next.
func TestTranscoderOneBufferForAllDocuments(t *testing.T) {
	t.Parallel()
	raw, docs := multiDocBody(3, 100<<10)
	tr, err := transcode(t, raw, Limits{MaxDocumentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if c := cap(tr.arena); c > len(raw)*3/4+3 || len(tr.arena) != 3*(100<<10) {
		t.Errorf("buffer: %d bytes used of %d, body %d", len(tr.arena), c, len(raw))
	}
	for i, want := range docs {
		got := tr.stash.docs[i].content
		if !bytes.Equal(got, want) || cap(got) != len(got) || &got[0] != &tr.arena[i*(100<<10)] {
			t.Errorf("document %d: equal %v, cap %d, in place %v", i, bytes.Equal(got, want), cap(got), &got[0] == &tr.arena[i*(100<<10)])
		}
	}
}

// BenchmarkUploadStream transcodes a body with one 8 MiB document; B/op
// over the document's size is the memory the stream holds per byte.
func BenchmarkUploadStream(b *testing.B) {
	raw, _ := multiDocBody(1, 8<<20)
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		res, err := Transcode(bytes.NewReader(raw), int64(len(raw)), Limits{MaxDocumentBytes: 10 << 20})
		if err != nil || len(res.Stash.docs[0].content) != 8<<20 {
			b.Fatal(err)
		}
	}
}
