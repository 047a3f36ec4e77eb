package workflow

import (
	"strings"
)

// RefKind says which kind of document a Reference names.
type RefKind string

// The two reference kinds of DESIGN §4.
const (
	// RefDocList names every document of one message, by message id and
	// label ("docList:<messageId>:<label>") or by label alone
	// ("docList:<label>", the latest message with that label).
	RefDocList RefKind = "docList"
	// RefDocItem names one document by id, optionally with its file name
	// ("docItem:<documentId>:<fileName>" or "docItem:<documentId>").
	RefDocItem RefKind = "docItem"
)

// maxReferenceLen bounds a reference before any parsing work.
const maxReferenceLen = 512

// Reference is a parsed document reference. Exactly the fields of its form
// are set: MessageID and/or Label for RefDocList, DocumentID and optionally
// FileName for RefDocItem.
type Reference struct {
	Kind       RefKind
	MessageID  string
	Label      string
	DocumentID string
	FileName   string
}

// String returns the reference in its canonical text form, which
// ParseReference accepts and turns back into the same Reference.
func (r Reference) String() string {
	switch r.Kind {
	case RefDocList:
		if r.MessageID != "" {
			return "docList:" + r.MessageID + ":" + r.Label
		}
		return "docList:" + r.Label
	case RefDocItem:
		if r.FileName != "" {
			return "docItem:" + r.DocumentID + ":" + r.FileName
		}
		return "docItem:" + r.DocumentID
	}
	return ""
}

// ParseReference parses one of the four reference forms of DESIGN §4. The
// text after "docList:" is a message id and a label when it starts with the
// message id prefix and holds a colon, else a label; the text after
// "docItem:" is a document id, then optionally ":" and a file name (which
// may itself contain colons). Surrounding spaces are ignored. Errors are of
// kind KindInvalid and quote the bad reference.
func ParseReference(s string) (Reference, error) {
	if len(s) > maxReferenceLen {
		return Reference{}, Errorf(KindInvalid, "document reference is longer than %d bytes", maxReferenceLen)
	}
	s = strings.TrimSpace(s)
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return Reference{}, Errorf(KindInvalid, "document reference %q: want docList:<messageId>:<label>, docList:<label>, docItem:<documentId>:<fileName> or docItem:<documentId>", s)
	}
	switch RefKind(kind) {
	case RefDocList:
		return parseDocList(s, rest)
	case RefDocItem:
		return parseDocItem(s, rest)
	}
	return Reference{}, Errorf(KindInvalid, "document reference %q: unknown kind %q (want docList or docItem)", s, kind)
}

func parseDocList(s, rest string) (Reference, error) {
	if id, label, ok := strings.Cut(rest, ":"); ok && strings.HasPrefix(id, PrefixMessage) {
		if !plainID(id, PrefixMessage) {
			return Reference{}, Errorf(KindInvalid, "document reference %q: malformed message id %q", s, id)
		}
		if !validLabel(label) {
			return Reference{}, Errorf(KindInvalid, "document reference %q: malformed label %q", s, label)
		}
		return Reference{Kind: RefDocList, MessageID: id, Label: label}, nil
	}
	if !validLabel(rest) {
		return Reference{}, Errorf(KindInvalid, "document reference %q: malformed label %q", s, rest)
	}
	return Reference{Kind: RefDocList, Label: rest}, nil
}

func parseDocItem(s, rest string) (Reference, error) {
	id, name, hasName := strings.Cut(rest, ":")
	if !plainID(id, PrefixDocument) {
		return Reference{}, Errorf(KindInvalid, "document reference %q: malformed document id %q", s, id)
	}
	if hasName && strings.TrimSpace(name) == "" {
		return Reference{}, Errorf(KindInvalid, "document reference %q: empty file name", s)
	}
	return Reference{Kind: RefDocItem, DocumentID: id, FileName: name}, nil
}

// plainID reports whether s is prefix followed by 1–64 lower-case letters,
// digits, "_" or "-". It accepts every id NewID makes (and shorter ids used
// by tests) while keeping arbitrary text out of lookups.
func plainID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || rest == "" || len(rest) > 64 {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// validLabel reports whether s is a usable documents label: non-empty, at
// most 200 bytes, no whitespace or control characters and no colon.
func validLabel(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == ':' {
			return false
		}
	}
	return true
}

// ResolveDocuments resolves refs against msgs, the messages of one workflow,
// and returns the documents they name: deduplicated by id, in reference
// order (a docList contributes its message's documents in their order).
//
// Only documents carried by msgs resolve, and only those whose WorkflowID
// (when set) is the workflow of the messages: a reference to another
// workflow's document never resolves. A docList with a message id must name
// that message's documentsLabel; a docItem with a file name must name that
// document's file name, exactly or in the one-line form the documents index
// shows. When any reference fails, the error (kind
// KindInvalid) names every bad reference and no documents are returned.
func ResolveDocuments(msgs []Message, refs []string) ([]Document, error) {
	wfID := workflowOf(msgs)
	var (
		docs     []Document
		seen     = map[string]bool{}
		problems []string
	)
	for _, s := range refs {
		ref, err := ParseReference(s)
		if err == nil {
			var got []Document
			got, err = resolve(msgs, wfID, ref)
			for _, d := range got {
				if !seen[d.ID] {
					seen[d.ID] = true
					docs = append(docs, d)
				}
			}
		}
		if err != nil {
			problems = append(problems, PublicMessage(err))
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Kind: KindInvalid, Message: strings.Join(problems, "; ")}
	}
	return docs, nil
}

// ResolveReference resolves one parsed reference against msgs, as
// ResolveDocuments does.
func ResolveReference(msgs []Message, ref Reference) ([]Document, error) {
	return resolve(msgs, workflowOf(msgs), ref)
}

// workflowOf returns the workflow id of the first message that has one.
func workflowOf(msgs []Message) string {
	for _, m := range msgs {
		if m.WorkflowID != "" {
			return m.WorkflowID
		}
	}
	return ""
}

// ownDocs returns m's documents that belong to workflow wfID and to m.
func ownDocs(m *Message, wfID string) []Document {
	if wfID != "" && m.WorkflowID != "" && m.WorkflowID != wfID {
		return nil
	}
	out := make([]Document, 0, len(m.Documents))
	for _, d := range m.Documents {
		if (d.WorkflowID == "" || wfID == "" || d.WorkflowID == wfID) && (d.MessageID == "" || d.MessageID == m.ID) {
			out = append(out, d)
		}
	}
	return out
}

func resolve(msgs []Message, wfID string, ref Reference) ([]Document, error) {
	switch ref.Kind {
	case RefDocList:
		m := findListMessage(msgs, wfID, ref)
		if m == nil {
			return nil, Errorf(KindInvalid, "document reference %q: no message of this workflow has it", ref.String())
		}
		if ref.MessageID != "" && m.DocumentsLabel != ref.Label {
			return nil, Errorf(KindInvalid, "document reference %q: message %s has label %q, not %q",
				ref.String(), m.ID, m.DocumentsLabel, ref.Label)
		}
		return ownDocs(m, wfID), nil
	case RefDocItem:
		for i := range msgs {
			for _, d := range ownDocs(&msgs[i], wfID) {
				if d.ID != ref.DocumentID {
					continue
				}
				if ref.FileName != "" && !sameFileName(ref.FileName, d.Name) {
					return nil, Errorf(KindInvalid, "document reference %q: document %s is named %q, not %q",
						ref.String(), d.ID, d.Name, ref.FileName)
				}
				return []Document{d}, nil
			}
		}
		return nil, Errorf(KindInvalid, "document reference %q: no document of this workflow has that id", ref.String())
	}
	return nil, Errorf(KindInvalid, "document reference %q: unknown kind", ref.String())
}

// sameFileName reports whether a reference's file name names a document
// called name: exactly, or as the one-line form (whitespace runs collapsed
// to one space, trimmed) in which the documents index and the history show
// names, so every reference they print resolves.
func sameFileName(ref, name string) bool {
	return ref == name || strings.Join(strings.Fields(ref), " ") == strings.Join(strings.Fields(name), " ")
}

// findListMessage returns the message a docList reference names: by id, or
// the latest (highest seq, then latest in slice order) with the label.
func findListMessage(msgs []Message, wfID string, ref Reference) *Message {
	var found *Message
	for i := range msgs {
		m := &msgs[i]
		if wfID != "" && m.WorkflowID != "" && m.WorkflowID != wfID {
			continue
		}
		if ref.MessageID != "" {
			if m.ID == ref.MessageID {
				return m
			}
			continue
		}
		if m.DocumentsLabel == ref.Label && (found == nil || m.Seq >= found.Seq) {
			found = m
		}
	}
	return found
}

// ResolveConnection returns the connection called label among conns, the
// connections the workflow's user owns. An empty label, or one the user
// does not own, is an error of kind KindInvalid naming the label and the
// labels that are available. It never returns a connection from outside
// conns.
func ResolveConnection(conns []Connection, label string) (*Connection, error) {
	if strings.TrimSpace(label) == "" {
		return nil, Errorf(KindInvalid, "connection label is empty")
	}
	labels := make([]string, 0, len(conns))
	for i := range conns {
		if conns[i].Label == label {
			c := conns[i]
			return &c, nil
		}
		labels = append(labels, conns[i].Label)
	}
	if len(labels) == 0 {
		return nil, Errorf(KindInvalid, "connection %q is not one of yours (you have no connections)", label)
	}
	return nil, Errorf(KindInvalid, "connection %q is not one of yours (available: %s)", label, strings.Join(labels, ", "))
}
