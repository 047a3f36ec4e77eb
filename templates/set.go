// Package templates holds twostep's prompt templates as files (*.tmpl,
// embedded in the binary) and their loader.
//
// A template reads like the prompt the model sees: role sections opened by
// divider lines ("--- system ---", "--- user ---") containing text and
// {{KEY:NAME}} placeholders. A template that names an unknown key, or a key
// its stage may not see, fails when it is loaded, never at run time; a
// render that lacks a value for a named key fails too (missingkey=error).
//
// An operator changes a template without rebuilding by putting a file of the
// same name in the override directory given to Load.
package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed *.tmpl
var builtin embed.FS

// ext is the file extension of a template file.
const ext = ".tmpl"

// ErrNotFound is returned (wrapped) by Set.Get for a name the set lacks.
var ErrNotFound = errors.New("template not found")

// Required names the templates every Set holds.
var required = []string{Stage1, Stage1Single, Stage2, Plan, Repair, Replan, Compact}

// Set is a loaded set of templates by name. It is immutable and safe for
// concurrent use.
type Set struct {
	byName map[string]Template
}

// Load parses the embedded templates and then every "*.tmpl" file of
// overrideDir ("" for none), which replaces the built-in template of the
// same name or adds a new one. Every template is parsed; the first error
// (an unknown key, a malformed placeholder, an unreadable file) is
// returned and no Set is made. The built-in stages must all be present.
func Load(overrideDir string) (*Set, error) {
	s := &Set{byName: map[string]Template{}}
	if err := s.addFS(builtin, "."); err != nil {
		return nil, fmt.Errorf("templates.Load: built-in: %w", err)
	}
	if overrideDir != "" {
		if err := s.addFS(os.DirFS(overrideDir), "."); err != nil {
			return nil, fmt.Errorf("templates.Load(%q): %w", overrideDir, err)
		}
	}
	for _, name := range required {
		if _, ok := s.byName[name]; !ok {
			return nil, fmt.Errorf("templates.Load: missing template %q", name)
		}
	}
	return s, nil
}

// addFS parses every *.tmpl file directly in dir of fsys.
func (s *Set) addFS(fsys fs.FS, dir string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		src, err := fs.ReadFile(fsys, filepath.ToSlash(filepath.Join(dir, e.Name())))
		if err != nil {
			return err
		}
		t, err := Parse(strings.TrimSuffix(e.Name(), ext), string(src))
		if err != nil {
			return err
		}
		s.byName[t.Name] = t
	}
	return nil
}

// Get returns the template called name, or an error wrapping ErrNotFound.
func (s *Set) Get(name string) (Template, error) {
	t, ok := s.byName[name]
	if !ok {
		return Template{}, fmt.Errorf("template %q: %w", name, ErrNotFound)
	}
	return t, nil
}

// Names returns the names of the set's templates, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// With returns a copy of the set in which t replaces (or adds) the template
// of its name. The receiver is unchanged.
func (s *Set) With(t Template) *Set {
	c := &Set{byName: make(map[string]Template, len(s.byName)+1)}
	for k, v := range s.byName {
		c.byName[k] = v
	}
	c.byName[t.Name] = t
	return c
}
