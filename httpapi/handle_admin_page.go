package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/httpapi/adminui"
)

// adminPageFile returns the viewer page's file served at path. The page's
// files are public: they hold no data (the page reads everything through
// /admin/v1 with the token the admin enters), so a browser can load them
// without a header.
func adminPageFile(path string) (string, bool) {
	switch path {
	case "/admin/":
		return "index.html", true
	case "/admin/app.js":
		return "app.js", true
	case "/admin/app.css":
		return "app.css", true
	}
	return "", false
}

// isAdminPage reports whether a request is for the viewer page itself
// ("/admin" redirects to "/admin/"), which the auth middleware lets
// through; every /admin/v1 route still needs an admin token.
func isAdminPage(method, path string) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	_, ok := adminPageFile(path)
	return ok || path == "/admin"
}

// adminPageCSP allows the page's own script and style and calls to its own
// origin only: no inline script, no external resource, no framing.
const adminPageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type pageOutput struct {
	ContentType  string `header:"Content-Type"`
	CacheControl string `header:"Cache-Control"`
	CSP          string `header:"Content-Security-Policy"`
	NoSniff      string `header:"X-Content-Type-Options"`
	Referrer     string `header:"Referrer-Policy"`
	Body         []byte
}

func (a *Admin) registerPage(api huma.API) {
	for i, path := range []string{"/admin/", "/admin/app.js", "/admin/app.css"} {
		name, _ := adminPageFile(path)
		data, ctype, ok := adminui.File(name)
		if !ok {
			panic("httpapi: the admin page lacks " + name) // the embed directive lists it: a build error
		}
		huma.Register(api, huma.Operation{
			OperationID: fmt.Sprintf("adminPage%d", i), Method: http.MethodGet, Path: path, Hidden: true,
			Summary: "The admin trace viewer page", Tags: []string{"admin"},
		}, func(context.Context, *struct{}) (*pageOutput, error) {
			return &pageOutput{
				ContentType: ctype, CacheControl: "no-cache", CSP: adminPageCSP, NoSniff: "nosniff",
				Referrer: "no-referrer", Body: data,
			}, nil
		})
	}
}
