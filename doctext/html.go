package doctext

import (
	"bytes"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skippedElements never contribute text: code, styling and embedded
// content.
var skippedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Head: true, atom.Svg: true, atom.Iframe: true, atom.Object: true, atom.Canvas: true,
}

// blockElements start and end on their own line.
var blockElements = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true,
	atom.Footer: true, atom.Main: true, atom.Nav: true, atom.Aside: true, atom.Ul: true, atom.Ol: true,
	atom.Li: true, atom.Table: true, atom.Tr: true, atom.Blockquote: true, atom.Pre: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Figure: true, atom.Form: true, atom.Hr: true,
	atom.Title: true,
}

var (
	spaceRun     = regexp.MustCompile(`[ \t\f\v\r\n]+`)
	blankLineRun = regexp.MustCompile(`\n{3,}`)
)

// htmlWriter accumulates the text of an HTML tree.
type htmlWriter struct {
	b        strings.Builder
	markdown bool
	pre      int
}

// htmlText returns the visible text of an HTML document: scripts, styles and
// other non-text elements are dropped, blocks become lines; in Markdown
// format headings, list items, emphasis and links keep their meaning.
func htmlText(b []byte, out Format) (string, error) {
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	w := &htmlWriter{markdown: out == Markdown}
	w.node(doc)
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	text := blankLineRun.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	return strings.TrimSpace(text) + "\n", nil
}

// node writes n and its children.
func (w *htmlWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.CommentNode, html.DoctypeNode:
		return
	case html.ElementNode:
		if skippedElements[n.DataAtom] {
			return
		}
		w.element(n)
		return
	}
	w.children(n)
}

// children writes every child of n.
func (w *htmlWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// element writes one element with the markup its role needs.
func (w *htmlWriter) element(n *html.Node) {
	a := n.DataAtom
	switch {
	case a == atom.Br:
		w.b.WriteString("\n")
		return
	case a == atom.Tr:
		w.row(n)
		return
	case a == atom.A && w.markdown:
		w.link(n)
		return
	case (a == atom.Strong || a == atom.B) && w.markdown:
		w.wrap(n, "**")
		return
	case (a == atom.Em || a == atom.I) && w.markdown:
		w.wrap(n, "_")
		return
	case !blockElements[a]:
		w.children(n)
		return
	}
	spaced := a == atom.P || headingLevel(a) > 0 || a == atom.Table || a == atom.Pre || a == atom.Ul || a == atom.Ol
	w.newline()
	if spaced {
		w.blankLine()
	}
	if w.markdown {
		if level := headingLevel(a); level > 0 {
			w.b.WriteString(strings.Repeat("#", level) + " ")
		}
	}
	if a == atom.Li {
		w.b.WriteString("- ")
	}
	if a == atom.Pre {
		w.pre++
		defer func() { w.pre-- }()
	}
	w.children(n)
	w.newline()
	if spaced {
		w.blankLine()
	}
}

// blankLine ends the current paragraph with an empty line, once.
func (w *htmlWriter) blankLine() {
	w.newline()
	if cur := w.b.String(); cur != "" && !strings.HasSuffix(cur, "\n\n") {
		w.b.WriteString("\n")
	}
}

// newline ends the current line unless it is empty.
func (w *htmlWriter) newline() {
	if cur := w.b.String(); cur != "" && !strings.HasSuffix(cur, "\n") {
		w.b.WriteString("\n")
	}
}

// row writes a table row on one line, cells separated by " | "; in Markdown
// a row of header cells is followed by the separator line.
func (w *htmlWriter) row(n *html.Node) {
	w.newline()
	cells, headers := 0, 0
	if w.markdown {
		w.b.WriteString("| ")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.DataAtom != atom.Td && c.DataAtom != atom.Th) {
			continue
		}
		if cells > 0 {
			w.b.WriteString(" | ")
		}
		cells++
		if c.DataAtom == atom.Th {
			headers++
		}
		w.children(c)
	}
	if w.markdown {
		w.b.WriteString(" |\n")
		if headers > 0 && headers == cells {
			w.b.WriteString("|" + strings.Repeat(" --- |", cells) + "\n")
		}
		return
	}
	w.b.WriteString("\n")
}

// text writes a text node, collapsing white space outside <pre>.
func (w *htmlWriter) text(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		return
	}
	s = spaceRun.ReplaceAllString(s, " ")
	cur := w.b.String()
	if strings.HasPrefix(s, " ") && (cur == "" || strings.HasSuffix(cur, "\n") || strings.HasSuffix(cur, " ")) {
		s = s[1:]
	}
	w.b.WriteString(s)
}

// wrap writes n's children between two markers.
func (w *htmlWriter) wrap(n *html.Node, marker string) {
	w.b.WriteString(marker)
	w.children(n)
	w.b.WriteString(marker)
}

// link writes a Markdown link for http(s) and mailto targets, plain text
// otherwise (javascript: and data: URLs are dropped).
func (w *htmlWriter) link(n *html.Node) {
	href := ""
	for _, at := range n.Attr {
		if at.Key == "href" {
			href = strings.TrimSpace(at.Val)
		}
	}
	lower := strings.ToLower(href)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "mailto:") {
		w.children(n)
		return
	}
	w.b.WriteString("[")
	w.children(n)
	w.b.WriteString("](" + strings.ReplaceAll(href, ")", "%29") + ")")
}

// headingLevel returns 1-6 for h1-h6 and 0 otherwise.
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}
