package workflow

import (
	"encoding/base64"
	"strings"
)

// Listing page sizes shared by every Store: a Page.Limit <= 0 means
// DefaultPageLimit; larger ones are cut to MaxPageLimit.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
)

// cursorTag starts every decoded cursor, so a cursor no store made is told
// apart from one that a store did.
const cursorTag = "after:"

// Validate reports the first reason c cannot be stored, as KindInvalid.
// Every Store calls it before writing anything. A document needs an id and
// a name; empty content is legitimate (an empty upload, an action's empty
// output) and is stored as a document of size 0. A trace needs an id and
// the workflow's id.
func (c Commit) Validate() error {
	switch {
	case c.Workflow == nil:
		return Errorf(KindInvalid, "commit has no workflow")
	case c.Workflow.ID == "":
		return Errorf(KindInvalid, "workflow id is required")
	case c.Workflow.UserID == "":
		return Errorf(KindInvalid, "workflow %s has no user id", c.Workflow.ID)
	case c.ExpectedVersion < 0:
		return Errorf(KindInvalid, "expected version %d is negative", c.ExpectedVersion)
	case c.Fence < 0:
		return Errorf(KindInvalid, "fence %d is negative", c.Fence)
	case c.RunningLimit < 0:
		return Errorf(KindInvalid, "running limit %d is negative", c.RunningLimit)
	}
	for i, m := range c.Messages {
		if m.ID == "" {
			return Errorf(KindInvalid, "message %d has no id", i)
		}
	}
	seen := make(map[string]bool, len(c.Documents))
	for i, d := range c.Documents {
		switch {
		case d.ID == "":
			return Errorf(KindInvalid, "document %d has no id", i)
		case d.Name == "":
			return Errorf(KindInvalid, "document %s has no name", d.ID)
		case seen[d.ID]:
			return Errorf(KindInvalid, "document %s appears twice", d.ID)
		}
		seen[d.ID] = true
	}
	traces := make(map[string]bool, len(c.Traces))
	for i, t := range c.Traces {
		switch {
		case t.ID == "":
			return Errorf(KindInvalid, "trace %d has no id", i)
		case t.WorkflowID != c.Workflow.ID:
			return Errorf(KindInvalid, "trace %s belongs to workflow %q, not %s", t.ID, t.WorkflowID, c.Workflow.ID)
		case traces[t.ID]:
			return Errorf(KindInvalid, "trace %s appears twice", t.ID)
		}
		traces[t.ID] = true
	}
	return nil
}

// Size returns the page size a store serves for p: DefaultPageLimit when
// p.Limit <= 0, at most MaxPageLimit.
func (p Page) Size() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageLimit
	case p.Limit > MaxPageLimit:
		return MaxPageLimit
	}
	return p.Limit
}

// EncodeCursor makes the opaque cursor that resumes a listing after the
// workflow id last.
func EncodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorTag + last))
}

// DecodeCursor returns the workflow id a cursor resumes after ("" for the
// first page), or KindInvalid for a cursor EncodeCursor did not make.
func DecodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	last, ok := strings.CutPrefix(string(b), cursorTag)
	if err != nil || !ok || last == "" {
		return "", Errorf(KindInvalid, "cursor %q is malformed", cursor)
	}
	return last, nil
}
