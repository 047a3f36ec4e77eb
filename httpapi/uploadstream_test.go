package httpapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// transcode runs the body stream over raw as the upload routes do.
func transcode(t testing.TB, raw []byte, limits Limits) (*transcoder, error) {
	t.Helper()
	tr := &transcoder{in: bufio.NewReaderSize(bytes.NewReader(raw), 16), limits: limits,
		length: int64(len(raw)), stash: &uploadStash{docs: map[int]*streamedDoc{}}}
	return tr, tr.run()
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
	var before, after apiv1.CreateWorkflowBody
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
		wantC, wantP, wantBig := limits.documentContent(before.Documents[i].Content, nil, i)
		gotC, gotP, gotBig := limits.documentContent(after.Documents[i].Content, tr.stash, i)
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

// TestUploadStreamOverHTTP: through the real route, an escaped-slash
// upload decodes, a body over maxBodyBytes is huma's 413, and a bad
// document is still reported with the others.
func TestUploadStreamOverHTTP(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096 })
	var got workflow.NewWorkflow
	env.engine.CreateFn = func(in workflow.NewWorkflow) (*workflow.Workflow, error) {
		got = in
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"a.txt","content":"P\/8\/"}]}`)
	if rec.Code != http.StatusCreated || len(got.Documents) != 1 || !bytes.Equal(got.Documents[0].Content, []byte{0x3f, 0xff, 0x3f}) {
		t.Fatalf("escaped slashes: %d %s, documents %+v", rec.Code, rec.Body, got.Documents)
	}
	rec = env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"a","content":"`+strings.Repeat("QUJD", 1100)+`"}]}`)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than 4096 bytes (limits.maxBodyBytes") {
		t.Errorf("oversized body: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"../a","content":"eA=="},{"name":"b","content":"-_"}]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "body.documents[0].name") ||
		!strings.Contains(rec.Body.String(), "body.documents[1].content") {
		t.Errorf("two bad documents: %d %s", rec.Code, rec.Body)
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
		tr := &transcoder{in: bufio.NewReaderSize(bytes.NewReader(raw), 64<<10), limits: Limits{MaxDocumentBytes: 10 << 20},
			length: int64(len(raw)), stash: &uploadStash{docs: map[int]*streamedDoc{}}}
		if err := tr.run(); err != nil || len(tr.stash.docs[0].content) != 8<<20 {
			b.Fatal(err)
		}
	}
}

// TestUploadStreamOnNewRounds: the rounds route decodes its documents
// through the same stream: the engine gets the bytes, a bad one is a 422
// naming it, an over-size one a 413.
func TestUploadStreamOnNewRounds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxDocumentBytes = 16 })
	w := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(w)
	var got workflow.NewRound
	env.engine.StartFn = func(_, _ string, in workflow.NewRound) (*workflow.Workflow, error) {
		got = in
		return testWorkflow("alice", workflow.StatusRunning), nil
	}
	path := "/api/v1/workflows/" + w.ID + "/rounds"
	rec := env.do(t, "POST", path, aliceToken, `{"documents":[{"name":"a.txt","content":"aGk="},{"name":"b.txt","content":"P\/8\/"}],"prompt":"more"}`)
	if rec.Code != http.StatusAccepted || got.Prompt != "more" || len(got.Documents) != 2 ||
		string(got.Documents[0].Content) != "hi" || !bytes.Equal(got.Documents[1].Content, []byte{0x3f, 0xff, 0x3f}) {
		t.Fatalf("round with documents: %d %s, engine got %+v", rec.Code, rec.Body, got)
	}
	rec = env.do(t, "POST", path, aliceToken, `{"prompt":"more","documents":[{"name":"a.txt","content":"a!=="}]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "body.documents[0].content") {
		t.Errorf("bad base64: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, "POST", path, aliceToken, `{"prompt":"more","documents":[{"name":"a.txt","content":"`+b64(strings.Repeat("x", 17))+`"}]}`)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("over-size document: %d %s", rec.Code, rec.Body)
	}
}

// countingBody counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// TestUploadStreamRefusesADeclaredOversizeBody: a body whose
// Content-Length is over maxBodyBytes is a 413 before a byte of it is
// read; one of unknown length is refused once maxBodyBytes were read.
func TestUploadStreamRefusesADeclaredOversizeBody(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096 })
	body := `{"prompt":"` + strings.Repeat("a", 5000) + `"}`
	for _, tt := range []struct {
		name     string
		length   int64
		wantRead func(int) bool
	}{
		{"declared", int64(len(body)), func(n int) bool { return n == 0 }},
		{"unknown length", -1, func(n int) bool { return n >= 4096 && n < len(body) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &countingBody{r: strings.NewReader(body)}
			req := httptest.NewRequest("POST", "/api/v1/workflows", src)
			req.ContentLength = tt.length
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			rec := httptest.NewRecorder()
			env.srv.Routes().ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than 4096 bytes (limits.maxBodyBytes") {
				t.Errorf("%d %s, want 413 naming the limit", rec.Code, rec.Body)
			}
			if !tt.wantRead(src.read) {
				t.Errorf("read %d of the body's %d bytes", src.read, len(body))
			}
		})
	}
}
