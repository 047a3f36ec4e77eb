package httpapi

import (
	"context"
	"mime"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

type getDocumentInput struct {
	WorkflowPath
	DocID string `path:"docId" maxLength:"64" doc:"Document id (doc_...)"`
}

type documentOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentLength      string `header:"Content-Length"`
	ContentDisposition string `header:"Content-Disposition"`
	NoSniff            string `header:"X-Content-Type-Options"`
	CSP                string `header:"Content-Security-Policy"`
	Body               []byte
}

func (s *Server) registerDocuments(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "getDocument", Method: http.MethodGet, Path: "/api/v1/workflows/{id}/documents/{docId}",
		Summary: "Download a document's bytes with its Content-Type", Tags: []string{"documents"},
		Errors: []int{401, 404},
	}, s.getDocument)
}

// getDocument serves the bytes as an attachment, sandboxed and unsniffed,
// so an uploaded HTML file cannot run script in the gateway's origin.
func (s *Server) getDocument(ctx context.Context, in *getDocumentInput) (*documentOutput, error) {
	doc, err := s.reads.Document(ctx, UserFrom(ctx), in.ID, in.DocID)
	if err != nil {
		return nil, s.fail(ctx, "getDocument", err)
	}
	ct := doc.MimeType
	if _, _, err := mime.ParseMediaType(ct); err != nil || ct == "" {
		ct = "application/octet-stream"
	}
	return &documentOutput{
		ContentType:        ct,
		ContentLength:      strconv.Itoa(len(doc.Content)),
		ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": doc.Name}),
		NoSniff:            "nosniff",
		CSP:                "sandbox",
		Body:               doc.Content,
	}, nil
}
