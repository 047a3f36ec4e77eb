package outbound

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// relativeHint ends the messages of refused paths.
const relativeHint = "give a path relative to the connection's base URL, such as /customers/42"

// CheckPath decides whether p may be appended to a base URL. It returns p
// percent-decoded, or why p is refused: absolute URLs, scheme-relative
// ("//host") and scheme-switching ("https:...") references, "." and ".."
// segments (also percent-encoded), backslashes, double encoding, control
// characters and an inline query or fragment, each with what to send
// instead. It needs no base URL, so a call can be checked before it is sent.
func CheckPath(p string) (decoded, refused string) {
	switch {
	case strings.ContainsFunc(p, func(r rune) bool { return r <= 0x20 || r == 0x7f }):
		return "", "spaces and control characters must be percent-encoded"
	case strings.Contains(p, `\`):
		return "", "backslashes are not allowed"
	case strings.HasPrefix(p, "//"):
		return "", "it names another host; " + relativeHint
	case strings.ContainsAny(p, "?#"):
		return "", "put query parameters in the query parameter, not in the path"
	}
	ref, err := url.Parse(p)
	if err != nil {
		return "", "it is not a valid URL path"
	}
	if ref.Scheme != "" || ref.Host != "" || ref.Opaque != "" || ref.User != nil {
		return "", "absolute URLs are not allowed; " + relativeHint
	}
	decoded, err = url.PathUnescape(p)
	switch {
	case err != nil:
		return "", "invalid percent-encoding"
	case strings.Contains(decoded, "%"):
		return "", "double percent-encoding is not allowed"
	case strings.ContainsAny(decoded, "\\\x00"):
		return "", "encoded backslashes and NUL are not allowed"
	case !utf8.ValidString(decoded):
		return "", "the decoded path is not valid UTF-8"
	case HasDotSegment(decoded):
		return "", `"." and ".." segments are not allowed; ` + relativeHint
	case compatibilityForms(decoded):
		return "", `compatibility forms of ".", "/" or "\" (such as full-width ones) are not allowed; ` + relativeHint
	}
	return decoded, ""
}

// compatibilityForms reports whether p's NFKC normalisation — which some
// servers and proxies apply — has a dot segment, a backslash or more
// slashes than p: full-width "．．／" would become "../" there.
func compatibilityForms(p string) bool {
	n := norm.NFKC.String(p)
	if n == p {
		return false
	}
	return HasDotSegment(n) || strings.Contains(n, `\`) || strings.Count(n, "/") != strings.Count(p, "/")
}

// PathUnder returns the URL of p under base with the query parameters q,
// or a KindInvalid error when CheckPath refuses p or the result would not
// be within base.
func PathUnder(base *url.URL, p string, q map[string]any) (*url.URL, error) {
	refuse := func(why string) error {
		return workflow.Errorf(workflow.KindInvalid, "path %s refused: %s", quote(textclip.Excerpt(p, 200)), why)
	}
	decoded, refused := CheckPath(p)
	if refused != "" {
		return nil, refuse(refused)
	}
	u := *base
	u.Path = base.Path + "/" + strings.TrimPrefix(decoded, "/")
	u.RawPath = base.EscapedPath() + "/" + strings.TrimPrefix(p, "/")
	u.RawQuery = encodeQuery(q)
	u.Fragment, u.RawFragment = "", ""
	if !WithinBase(base, &u) {
		return nil, refuse("it leaves the connection's base URL")
	}
	return &u, nil
}

// WithinBase reports whether u has base's scheme and host and a path equal
// to or below base's path. It is the rule for requests and redirects alike.
func WithinBase(base, u *url.URL) bool {
	if !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) || u.User != nil {
		return false
	}
	bp := strings.TrimSuffix(base.Path, "/")
	if u.Path != bp && !strings.HasPrefix(u.Path, bp+"/") {
		return false
	}
	return !HasDotSegment(u.Path) && !compatibilityForms(u.Path) && utf8.ValidString(u.Path)
}

// HasDotSegment reports whether a decoded path has a "." or ".." segment,
// counting backslashes as separators (IIS, Windows servers and some
// proxies turn "\" into "/", so "\..\admin" is "/../admin" there) and
// "..;x" as "..": Tomcat, Jetty and Spring drop a segment's ";params"
// before resolving dot segments, so "/base/..;/admin" would leave the base
// path on such a server.
func HasDotSegment(p string) bool {
	for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		seg, _, _ = strings.Cut(seg, ";")
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// encodeQuery encodes query parameters (url.Values sorts them by name); numbers are written
// without exponent or trailing zeros.
func encodeQuery(q map[string]any) string {
	if len(q) == 0 {
		return ""
	}
	v := url.Values{}
	for k, val := range q {
		switch x := val.(type) {
		case string:
			v.Set(k, x)
		case float64:
			v.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
		case bool:
			v.Set(k, strconv.FormatBool(x))
		default:
			v.Set(k, fmt.Sprint(x))
		}
	}
	return v.Encode()
}

// quote quotes s for a message.
func quote(s string) string {
	return "\"" + strings.ReplaceAll(s, "\"", "'") + "\""
}
