package openapi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// folder is the directory a file document lives in, after resolving every
// symbolic link in the document's path, opened as an os.Root: the document
// and the files its $refs name are read through it, so neither "..", an
// absolute path nor a symbolic link can lead a read outside.
type folder struct {
	dir  string // absolute, links resolved
	root *os.Root
	max  int64 // the size cap of one file
}

// openFolder opens the folder of the document at spec.
func openFolder(spec string, max int64) (*folder, string, error) {
	resolved, err := filepath.EvalSymlinks(spec)
	if err == nil {
		resolved, err = filepath.Abs(resolved)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, "", fmt.Errorf("open %s: %w", spec, err)
	}
	dir := filepath.Dir(resolved)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return &folder{dir: dir, root: root, max: max}, resolved, nil
}

// Close releases the folder.
func (f *folder) Close() error { return f.root.Close() }

// read returns the content of the file at p (absolute, or relative to the
// working directory as the loader hands it), refusing a path or a link
// that leaves the folder and a file over the cap. Its errors name the path,
// never the content.
func (f *folder) read(p string) ([]byte, error) {
	abs, err := filepath.Abs(filepath.Clean(filepath.FromSlash(p)))
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(f.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s is outside the document's folder %s; a file document may refer only to files in its folder", p, f.dir)
	}
	file, err := f.root.Open(rel)
	if err != nil {
		if strings.Contains(err.Error(), "path escapes from parent") {
			return nil, fmt.Errorf("%s leads outside the document's folder %s (through a symbolic link); a file document may refer only to files in its folder", p, f.dir)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s cannot be read: %w", p, err)
	}
	defer file.Close()
	return cappedRead(file, p, f.max)
}

// loaderReader is the loader's reader of $ref'd files: file locations
// only, through the folder.
func (f *folder) loaderReader(_ *openapi3.Loader, location *url.URL) ([]byte, error) {
	if location.Scheme != "" && location.Scheme != "file" || location.Host != "" {
		return nil, fmt.Errorf("%s is not a file; a file document may refer only to files in its folder", location.Redacted())
	}
	return f.read(location.Path)
}

// cappedRead reads r whole, refusing more than max bytes.
func cappedRead(r io.Reader, what string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", what, max)
	}
	return data, nil
}

// quotedValue matches what YAML decoding errors quote of a document's
// content (`root:x:...`).
var quotedValue = regexp.MustCompile("`[^`]*`")

// withoutContent is err's text with every quoted piece of a document's
// content removed, so a file that is not an OpenAPI document is never
// quoted in an error or log line.
func withoutContent(err error) string {
	return quotedValue.ReplaceAllString(err.Error(), "(a value)")
}
