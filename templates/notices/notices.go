// Package notices holds the short texts twostep writes to the model (and,
// for a round it ends, to the user) beside the stage prompts: the
// validation feedback of a retry, the rejection of a reply cut at the
// token limit, the loop warning, and the closing messages of a round
// ended by a loop, its step limit, the end of its action plan, an
// unusable plan, an interrupting round or a spent budget. Each is a
// template file (*.tmpl, embedded in the binary) that reads like the text
// the model sees, rendered with text/template and missingkey=error.
//
// The package imports only the standard library, so workflow can say
// these things without importing the prompt templates' loader (which
// imports workflow). Count is the one rule that writes a number with its
// noun; workflow.Count and the templates use it.
package notices

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// set holds every notice template, parsed once and never changed after:
// text/template executes concurrently.
var set = template.Must(template.New("notices").Option("missingkey=error").Funcs(template.FuncMap{
	"plural": Plural,
	"count":  Count,
	"steps":  joinSteps,
	"flat":   func(s string) string { return strings.ReplaceAll(s, "\n", " ") },
}).ParseFS(files, "*.tmpl"))

// Plural returns the noun for n things: singular when n is 1, else plural
// ("" adds "s" to singular).
func Plural(n int, singular, plural string) string {
	if n == 1 {
		return singular
	}
	if plural == "" {
		return singular + "s"
	}
	return plural
}

// Count writes n with its noun in the right number ("1 document",
// "2 documents"); plural is the noun's plural form, or "" to add "s".
func Count(n int, singular, plural string) string {
	return strconv.Itoa(n) + " " + Plural(n, singular, plural)
}

// joinSteps writes step numbers as a list: "2", "2 and 3", "2, 3 and 4".
func joinSteps(steps []int) string {
	var b strings.Builder
	for i, n := range steps {
		switch {
		case i == 0:
		case i == len(steps)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// render executes the template name (a file name without ".tmpl") with
// data and drops the file's final newline. The templates and their data
// are this package's own, so a failure is a bug in it: render panics.
func render(name string, data any) string {
	var b strings.Builder
	if err := set.ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		panic(fmt.Sprintf("notices: %s: %v", name, err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Repeat is a step that repeated earlier steps of its round: the step,
// its action and the earlier steps it repeated, oldest first (at least
// one).
type Repeat struct {
	Step    int
	Action  string
	Earlier []int
}

// LoopWarning is the "# Repeated step" section the next Stage 1 prompt
// carries when one more identical call would end the round; complete is
// the action that ends a round with an answer.
func LoopWarning(r Repeat, complete string) string {
	return render("loop_warning", struct {
		Repeat
		Complete string
	}{r, complete})
}

// LoopEnd is the closing message of a round ended because r repeated
// earlier steps too often.
func LoopEnd(r Repeat) string {
	return render("loop_end", r)
}

// Truncated is the rejection of a reply the provider stopped at the token
// limit, with its stop reason and the tokens it reached.
func Truncated(stopReason string, tokens int) string {
	return render("truncated", struct {
		StopReason string
		Tokens     int
	}{stopReason, tokens})
}

// Feedback is the "# Validation feedback" section of a retry: a heading,
// an instruction and one "- " line per problem (a problem's newlines
// become spaces); "" when there is no problem.
func Feedback(problems []string) string {
	if len(problems) == 0 {
		return ""
	}
	return render("feedback", problems)
}

// MoreProblems is the last problem line when n more problems were left
// out of a list.
func MoreProblems(n int) string {
	return render("more_problems", n)
}
