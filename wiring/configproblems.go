package wiring

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/yamlcheck"
)

// This file turns the problems of GATEWAY_CONFIG (the gateway's own
// sections, decoded by yamlcheck, and those the actions and mcp loaders
// report) into one line each that names the file, the line and the key
// path, with one problem per unset variable.

// problemPath is the key path a section problem starts with, as in
// "httpActions[0]: header \"Authorization\": ...".
var problemPath = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*(?:\[\d+\])?(?:\.[A-Za-z0-9_]+|\[\d+\])*)(?:: | )`)

// namedKey finds the header or env entry a section problem names.
var namedKey = regexp.MustCompile(`: (header|env) "([^"]+)"`)

// configProblems returns one line per problem of the file, each with the
// file's name and, when the problem does not say it already, the line of
// the key path it starts with (a header's or env entry's own line when it
// names one).
// A section loader's error ("GATEWAY_CONFIG f: pkg: invalid ...
// configuration:" and a "- problem" line each) counts as its problems.
func configProblems(file string, root *yaml.Node, problems []string) []string {
	var placed []string
	unset := map[string][]string{} // variable → the places that use it
	for _, p := range problems {
		p = strings.TrimPrefix(p, "GATEWAY_CONFIG "+file+": ")
		parts := strings.Split(p, "\n- ")
		if len(parts) > 1 {
			parts = parts[1:] // the section's header line
		}
		for _, p := range parts {
			p = placeProblem(root, p)
			if m := unsetVar.FindStringSubmatch(p); m != nil {
				if _, seen := unset[m[2]]; !seen {
					placed = append(placed, p) // the first use stands for all
				}
				unset[m[2]] = append(unset[m[2]], m[1])
				continue
			}
			placed = append(placed, p)
		}
	}
	slices.SortStableFunc(placed, func(a, b string) int { return problemLine(a) - problemLine(b) })
	out := make([]string, len(placed))
	for i, p := range placed {
		if m := unsetVar.FindStringSubmatch(p); m != nil && len(unset[m[2]]) > 1 {
			p = fmt.Sprintf("environment variable %s is %s (used at %s)", m[2], m[3], strings.Join(unset[m[2]], "; "))
			if l := problemLine(unset[m[2]][0]); l > 0 {
				p = fmt.Sprintf("line %d: %s", l, p)
			}
		}
		out[i] = "GATEWAY_CONFIG " + file + " " + p
	}
	return out
}

// problemLine is the line a placed problem names, 0 for none.
func problemLine(p string) int {
	n := 0
	if rest, ok := strings.CutPrefix(p, "line "); ok {
		for _, r := range rest {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int(r-'0')
		}
	}
	return n
}

// unsetVar matches a placed problem about an unset or empty ${VAR}: the
// place (line, path, header or env key), the variable and what is wrong.
var unsetVar = regexp.MustCompile(`^(.*?): environment variable (\w+) is (not set|empty)$`)

// placeProblem prefixes p with the line of the key path it starts with,
// unless it names its line already.
func placeProblem(root *yaml.Node, p string) string {
	if strings.HasPrefix(p, "line ") {
		return p
	}
	m := problemPath.FindStringSubmatch(p)
	if m == nil {
		return p
	}
	line := yamlcheck.LineOf(root, m[1])
	if k := namedKey.FindStringSubmatch(p); k != nil {
		section := map[string]string{"header": ".headers.", "env": ".env."}[k[1]]
		if l := yamlcheck.LineOf(root, m[1]+section+k[2]); l > 0 {
			line = l
		}
	}
	if line == 0 {
		return p
	}
	return fmt.Sprintf("line %d: %s", line, p)
}
