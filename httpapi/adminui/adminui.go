// Package adminui is the admin trace viewer page, embedded in the gateway
// binary: plain HTML, CSS and JavaScript with no external resource and no
// build step. The page asks for the admin token once per browser session
// (sessionStorage) and reads everything else from the /admin/v1 routes.
//
// Guarantee: the script renders every piece of workflow data (prompts,
// replies, messages) with textContent, never as HTML, because prompts carry
// user text and model output.
package adminui

import (
	"embed"
	"path"
)

//go:embed index.html app.js app.css
var files embed.FS

// contentType returns the Content-Type of a served file by its extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "application/octet-stream"
}

// Names returns the names of the page's files; "index.html" is the page.
func Names() []string { return []string{"index.html", "app.js", "app.css"} }

// File returns the bytes and Content-Type of one of the page's files; ok is
// false for any other name.
func File(name string) (data []byte, ctype string, ok bool) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, "", false
	}
	return data, contentType(name), true
}
