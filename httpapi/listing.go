package httpapi

import (
	"github.com/twostep/twostep/workflow"
)

// listScanLimit bounds how many stored workflows one filtered listing
// reads; past it the page comes back short, with a nextCursor that
// continues the scan.
const listScanLimit = 1000

// filteredPage returns up to limit workflows from list, starting at
// cursor, that keep accepts (all of them when keep is nil). Each store
// page asks for no more than the matches still missing, so the returned
// cursor never skips one; at most listScanLimit workflows are read.
func filteredPage(list func(workflow.Page) ([]*workflow.Workflow, string, error), limit int, cursor string,
	keep func(*workflow.Workflow) bool) ([]*workflow.Workflow, string, error) {
	var out []*workflow.Workflow
	next, scanned := cursor, 0
	for {
		page, after, err := list(workflow.Page{Limit: limit - len(out), Cursor: next})
		if err != nil {
			return nil, "", err
		}
		next = after
		scanned += len(page)
		for _, w := range page {
			if keep == nil || keep(w) {
				out = append(out, w)
			}
		}
		if keep == nil || len(out) >= limit || next == "" || scanned >= listScanLimit {
			return out, next, nil
		}
	}
}
