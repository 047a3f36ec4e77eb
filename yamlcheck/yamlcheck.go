// Package yamlcheck decodes a YAML configuration section strictly and
// reports what is wrong the way a person reads the file: the true line,
// the key path as written in YAML (httpActions[0].method), a suggestion
// for a misspelt key, and the kind of value expected — never a Go type
// name. Decoding a yaml.Node keeps the file's line numbers, so a section
// handed on as a node (connections, httpActions, mcpServers) is reported
// with the lines of the file it came from.
package yamlcheck

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/textclip"
)

// Problem is one thing wrong in a YAML file.
type Problem struct {
	// Line is the 1-based line in the file; 0 when unknown.
	Line int
	// Path is the key path as written, e.g. "limits.maxBodyBytes" or
	// "httpActions[0].method"; empty for the document itself.
	Path string
	// Msg says what is wrong and what would be right.
	Msg string
}

// String is "line N: path: msg", leaving out what is unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Strings returns each problem's String.
func Strings(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// Decode decodes node into out (a non-nil pointer) and returns every
// problem at once: keys out has no field for (with the closest known key
// as a suggestion) and values of the wrong kind. path is node's own key
// path ("" for a whole document). A zero node decodes to nothing. A
// problem decoding leaves out partly filled; callers refuse the file.
func Decode(node *yaml.Node, path string, out any) []Problem {
	if node == nil || node.Kind == 0 {
		return nil
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	problems := unknownKeys(node, path, reflect.TypeOf(out).Elem())
	if err := node.Decode(out); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return append(problems, Problem{Line: node.Line, Path: path, Msg: err.Error()})
		}
		for _, msg := range te.Errors {
			problems = append(problems, typeProblem(node, path, reflect.TypeOf(out).Elem(), msg))
		}
	}
	slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
	return problems
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// unknownKeys walks node along t and reports every mapping key t has no
// field for.
func unknownKeys(node *yaml.Node, path string, t reflect.Type) []Problem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.AliasNode || t == reflect.TypeFor[yaml.Node]() ||
		reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var problems []Problem
	switch {
	case t.Kind() == reflect.Struct && node.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key, val := node.Content[i], node.Content[i+1]
			ft, ok := fields[key.Value]
			if !ok {
				problems = append(problems, Problem{Line: key.Line, Path: join(path, key.Value), Msg: unknownKeyMsg(key.Value, fields)})
				continue
			}
			problems = append(problems, unknownKeys(val, join(path, key.Value), ft)...)
		}
	case t.Kind() == reflect.Map && node.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			problems = append(problems, unknownKeys(node.Content[i+1], join(path, node.Content[i].Value), t.Elem())...)
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && node.Kind == yaml.SequenceNode:
		for i, item := range node.Content {
			problems = append(problems, unknownKeys(item, path+"["+strconv.Itoa(i)+"]", t.Elem())...)
		}
	}
	return problems
}

// yamlFields maps the YAML keys of struct t to their types, inline
// structs' keys included.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("yaml")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					fields[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

func unknownKeyMsg(key string, fields map[string]reflect.Type) string {
	msg := fmt.Sprintf("unknown key %q", key)
	if s := suggest(key, fields); s != "" {
		return msg + fmt.Sprintf("; did you mean %q?", s)
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	return msg + " (known keys: " + strings.Join(known, ", ") + ")"
}

// suggest returns the known key closest to key: equal but for case, or
// within an edit distance of a third of its length (at least 1, at most
// 3); "" when none is that close.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestDist := "", 0
	limit := min(max(len(key)/3, 1), 3)
	for k := range fields {
		if strings.EqualFold(k, key) {
			return k
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d <= limit && (best == "" || d < bestDist || (d == bestDist && k < best)) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and transpositions of
// neighbours ("modle" is one edit from "model").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var (
	lineRe      = regexp.MustCompile(`^line (\d+): (.*)$`)
	unmarshalRe = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
)

// typeProblem turns one of yaml's type error lines ("line 3: cannot
// unmarshal !!str `many` into int") into a problem naming the key path
// and the kind of value expected.
func typeProblem(node *yaml.Node, path string, t reflect.Type, msg string) Problem {
	p := Problem{Path: path, Msg: msg}
	root := path
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Msg = m[2]
		if found := pathAtLine(node, path, p.Line); found != "" {
			p.Path = found
		}
	}
	if m := unmarshalRe.FindStringSubmatch(p.Msg); m != nil {
		want := kindOf(typeAt(t, strings.TrimPrefix(strings.TrimPrefix(p.Path, root), ".")))
		if m[2] == "" {
			p.Msg = fmt.Sprintf("%s given; want %s", yamlKind(m[1]), want)
		} else {
			p.Msg = fmt.Sprintf("%s is %s; want %s", quoteValue(m[2]), yamlKind(m[1]), want)
		}
	}
	return p
}

// typeAt follows path (relative to t) through struct fields, map values
// and list items; nil when it leads nowhere.
func typeAt(t reflect.Type, path string) reflect.Type {
	for _, part := range splitPath(path) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case strings.HasPrefix(part, "[") && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			ft, ok := yamlFields(t)[part]
			if !ok {
				return nil
			}
			t = ft
		default:
			return nil
		}
	}
	return t
}

func quoteValue(v string) string {
	return strconv.Quote(textclip.Clip(v, 40))
}

// yamlKind names a YAML tag for a person.
func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "a string"
	case "int":
		return "a whole number"
	case "float":
		return "a number"
	case "bool":
		return "true or false"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "null":
		return "empty"
	}
	return "a " + tag
}

// kindOf names the kind of value t takes, without its Go name.
func kindOf(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration such as 30s or 2m"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping of keys to values"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return "another kind of value"
}

// pathAtLine returns the key path of the value on line in node (path is
// node's own), or "" when no value starts there.
func pathAtLine(node *yaml.Node, path string, line int) string {
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			key, val := node.Content[i], node.Content[i+1]
			// A scalar or a flow collection ([a], {k: v}) on the line is the
			// key's value; a block collection starts on its first entry's
			// line, which the recursion below names.
			inline := val.Kind == yaml.ScalarNode || val.Style&yaml.FlowStyle != 0
			if key.Line == line || (inline && val.Line == line) {
				return join(path, key.Value)
			}
			if p := pathAtLine(val, join(path, key.Value), line); p != "" {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, item := range node.Content {
			if p := pathAtLine(item, path+"["+strconv.Itoa(i)+"]", line); p != "" {
				return p
			}
		}
	}
	if node.Line == line {
		return path
	}
	return ""
}

// LineOf returns the line of the value at path in node (a document or its
// root), or 0 when path names nothing in it. path is written as Problem
// paths are: keys joined by dots, list items as [i].
func LineOf(node *yaml.Node, path string) int {
	if node == nil {
		return 0
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	for _, part := range splitPath(path) {
		next := (*yaml.Node)(nil)
		switch {
		case strings.HasPrefix(part, "["):
			i, err := strconv.Atoi(strings.Trim(part, "[]"))
			if err == nil && node.Kind == yaml.SequenceNode && i >= 0 && i < len(node.Content) {
				next = node.Content[i]
			}
		case node.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Value == part {
					next = node.Content[i+1]
					if next.Kind == yaml.ScalarNode {
						next = node.Content[i] // the key's line
					}
					break
				}
			}
		}
		if next == nil {
			return 0
		}
		node = next
	}
	return node.Line
}

// splitPath splits "a.b[0].c" into "a", "b", "[0]", "c".
func splitPath(path string) []string {
	var parts []string
	for seg := range strings.SplitSeq(path, ".") {
		for seg != "" {
			i := strings.Index(seg[1:], "[")
			if i < 0 {
				parts = append(parts, seg)
				break
			}
			parts = append(parts, seg[:i+1])
			seg = seg[i+1:]
		}
	}
	return parts
}
