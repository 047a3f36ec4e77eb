package upload

import "encoding/base64"

// doc is one documents[i].content decoded while the body was read.
type doc struct {
	content  []byte
	problem  string // content is not valid base64: the message for the 422
	tooLarge bool   // decoded content is over MaxDocumentBytes (the bytes are dropped)
}

// Stash holds the decoded contents of a body's documents by index.
type Stash struct{ docs map[int]*doc }

// Content is document i's decoded bytes: from the stash when the body
// stream decoded it, else from b64 (the content string the body holds,
// for a body that was not transcoded). problem is why the content is not
// valid base64; tooLarge says it decodes to more than maxBytes. A nil
// Stash decodes b64.
func (s *Stash) Content(i int, b64 string, maxBytes int64) (content []byte, problem string, tooLarge bool) {
	if s != nil {
		if d, ok := s.docs[i]; ok {
			return d.content, d.problem, d.tooLarge
		}
	}
	if int64(base64.StdEncoding.DecodedLen(len(b64))) > maxBytes+3 {
		return nil, "", true
	}
	content, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, "content is not valid standard base64: " + err.Error(), false
	}
	return content, "", false
}
