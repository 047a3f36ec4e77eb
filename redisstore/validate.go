package redisstore

import (
	"encoding/base64"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Listing page sizes: a Limit <= 0 means defaultLimit; larger ones are cut
// to maxLimit.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// cursorTag starts every decoded cursor, so a cursor this store did not
// make is told apart from one it did.
const cursorTag = "after:"

// validateCommit reports the first reason c cannot be stored, as
// KindInvalid. A document needs an id and a name; empty content is
// legitimate (an empty upload, an action's empty output) and is stored as a
// document of size 0.
func validateCommit(c workflow.Commit) error {
	switch {
	case c.Workflow == nil:
		return workflow.Errorf(workflow.KindInvalid, "commit has no workflow")
	case c.Workflow.ID == "":
		return workflow.Errorf(workflow.KindInvalid, "workflow id is required")
	case c.Workflow.UserID == "":
		return workflow.Errorf(workflow.KindInvalid, "workflow %s has no user id", c.Workflow.ID)
	case c.ExpectedVersion < 0:
		return workflow.Errorf(workflow.KindInvalid, "expected version %d is negative", c.ExpectedVersion)
	}
	for i, m := range c.Messages {
		if m.ID == "" {
			return workflow.Errorf(workflow.KindInvalid, "message %d has no id", i)
		}
	}
	seen := make(map[string]bool, len(c.Documents))
	for i, d := range c.Documents {
		switch {
		case d.ID == "":
			return workflow.Errorf(workflow.KindInvalid, "document %d has no id", i)
		case d.Name == "":
			return workflow.Errorf(workflow.KindInvalid, "document %s has no name", d.ID)
		case seen[d.ID]:
			return workflow.Errorf(workflow.KindInvalid, "document %s appears twice", d.ID)
		}
		seen[d.ID] = true
	}
	return nil
}

// pageLimit applies the listing defaults to p.Limit.
func pageLimit(p workflow.Page) int {
	switch {
	case p.Limit <= 0:
		return defaultLimit
	case p.Limit > maxLimit:
		return maxLimit
	}
	return p.Limit
}

// encodeCursor makes the opaque cursor that resumes a listing after the
// workflow id last.
func encodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorTag + last))
}

// decodeCursor returns the workflow id a cursor resumes after ("" for the
// first page), or KindInvalid for a cursor this store did not make.
func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	last, ok := strings.CutPrefix(string(b), cursorTag)
	if err != nil || !ok || last == "" {
		return "", workflow.Errorf(workflow.KindInvalid, "cursor %q is malformed", cursor)
	}
	return last, nil
}
