package mcp

import (
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// caps bound what one tool result may bring into the workflow.
type caps struct {
	text     int64 // the message text, in bytes
	document int64 // one document, in bytes
}

// mapResult turns a tools/call result into the step's result: text content
// becomes the message text, structured content a JSON document, images,
// audio and embedded resources documents with their MIME types, resource
// links lines of text. isError true is a failed step carrying the tool's
// text. Anything beyond the caps is a failed step that says so.
func mapResult(action string, res *sdk.CallToolResult, c caps) (workflow.ActionResult, error) {
	var texts []string
	var docs []workflow.DocumentContent
	add := func(name, mimeType string, content []byte) {
		docs = append(docs, workflow.DocumentContent{
			Document: workflow.Document{Name: name, MimeType: mimeType, Size: int64(len(content))},
			Content:  content,
		})
	}
	for i, item := range res.Content {
		n := i + 1
		switch v := item.(type) {
		case *sdk.TextContent:
			texts = append(texts, v.Text)
		case *sdk.ImageContent:
			add(fmt.Sprintf("image-%d%s", n, extension(v.MIMEType, ".bin")), orDefault(v.MIMEType, "application/octet-stream"), v.Data)
		case *sdk.AudioContent:
			add(fmt.Sprintf("audio-%d%s", n, extension(v.MIMEType, ".bin")), orDefault(v.MIMEType, "application/octet-stream"), v.Data)
		case *sdk.EmbeddedResource:
			if r := v.Resource; r != nil {
				if r.Blob != nil {
					add(resourceName(r.URI, n, r.MIMEType, ".bin"), orDefault(r.MIMEType, "application/octet-stream"), r.Blob)
				} else {
					add(resourceName(r.URI, n, r.MIMEType, ".txt"), orDefault(r.MIMEType, "text/plain"), []byte(r.Text))
				}
			}
		case *sdk.ResourceLink:
			texts = append(texts, fmt.Sprintf("resource link: %s <%s>", orDefault(v.Title, v.Name), v.URI))
		}
	}
	text := strings.Join(texts, "\n\n")
	if res.IsError {
		msg := strings.TrimSpace(text)
		if msg == "" {
			msg = "no reason given"
		}
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid, "%s reported an error: %s", action, textclip.Clip(msg, 2000))
	}
	if res.StructuredContent != nil {
		raw, err := json.MarshalIndent(res.StructuredContent, "", "  ")
		if err != nil {
			return workflow.ActionResult{}, workflow.WrapKind(workflow.KindInvalid, err, "%s returned structured content that is not JSON", action)
		}
		add("structured-content.json", "application/json", raw)
		if text == "" {
			compact, _ := json.Marshal(res.StructuredContent)
			text = string(compact)
		}
	}
	for _, d := range docs {
		if int64(len(d.Content)) > c.document {
			return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
				"%s returned %s of %d bytes, more than the %d-byte document limit: ask for less", action, d.Name, len(d.Content), c.document)
		}
	}
	if int64(len(text)) > c.text {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
			"%s returned %d bytes of text, more than the %d-byte limit: ask for less", action, len(text), c.text)
	}
	if text == "" && len(docs) == 0 {
		text = action + " returned nothing"
	}
	return workflow.ActionResult{Text: text, Documents: docs}, nil
}

// resourceName names an embedded resource's document after the last
// segment of its URI, or resource-n with the MIME type's extension.
func resourceName(uri string, n int, mimeType, fallbackExt string) string {
	base := path.Base(strings.TrimRight(uri, "/"))
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		base = base[:i]
	}
	if base == "" || base == "." || base == "/" || strings.Contains(base, ":") || len(base) > 100 {
		return fmt.Sprintf("resource-%d%s", n, extension(mimeType, fallbackExt))
	}
	if path.Ext(base) == "" {
		base += extension(mimeType, fallbackExt)
	}
	return base
}

// extension returns the usual file extension of mimeType, or fallback.
func extension(mimeType, fallback string) string {
	switch strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0])) {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "text/plain":
		return ".txt"
	case "application/json":
		return ".json"
	}
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return fallback
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
