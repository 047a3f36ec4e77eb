package prompts

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The dates and times of a text, for Ungrounded. A date is read from the
// forms people and systems write: 2024-03-05 (also with / or .), 5 March
// 2024, 5th of Mar. 2024, March 5, 2024, and the numeric 05.03.2024,
// 5/3/2024 or 5-3-24, read both day-first and month-first (a reader cannot
// tell, so neither can the check). A date with no year is no date: Stage 2
// does not know the year, so a value that adds one invented it. Month
// names are English.

// civilDate is a calendar date.
type civilDate struct{ y, m, d int }

const monthNames = `(january|jan|february|feb|march|mar|april|apr|may|june|jun|july|jul|august|aug|september|sept|sep|october|oct|november|nov|december|dec)`

var months = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
	"sep": 9, "oct": 10, "nov": 11, "dec": 12}

// The date forms: year first, numeric day or month first, day then month
// name, month name then day. Each names its groups y, m, d (n1 and n2 for
// the numeric form, whose order is unknown).
var (
	dateISO     = `(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})`
	dateNumeric = `(?P<n1>\d{1,2})[-/.](?P<n2>\d{1,2})[-/.](?P<y>\d{4}|\d{2})`
	dateDMY     = `(?P<d>\d{1,2})(?:st|nd|rd|th)?\.? (?:of )?(?P<m>` + monthNames + `)\.?,? (?P<y>\d{4})`
	dateMDY     = `(?P<m>` + monthNames + `)\.? (?P<d>\d{1,2})(?:st|nd|rd|th)?,? (?P<y>\d{4})`
	dateForms   = []string{dateISO, dateNumeric, dateDMY, dateMDY}
	// textDates finds the forms in a text, not inside a longer number.
	textDates = compileAll(`(?:^|[^\d])`, `(?:[^\d]|$)`)
	// valueDates matches a whole value, after an optional weekday.
	valueDates = compileAll(`^(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,? )?`, `$`)
)

// dateTimeValue is an ISO 8601 date and time (RFC 3339 with or without
// seconds, fraction and zone).
var dateTimeValue = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})[t ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?$`)

// textTimes finds times of day: 14:02, 9.30 am, 10am, 10 p.m.
var textTimes = regexp.MustCompile(`(?:^|[^\d])(\d{1,2})(?:[:.](\d{2}))?\s?(am|pm|a\.m\.|p\.m\.)?`)

func compileAll(before, after string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(dateForms))
	for i, f := range dateForms {
		out[i] = regexp.MustCompile(before + f + after)
	}
	return out
}

// scanDates calls add with every reading of every date of text
// (normalised).
func scanDates(text string, add func(civilDate)) {
	for _, re := range textDates {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			for _, d := range datesOf(re, m) {
				add(d)
			}
		}
	}
}

// parseDateValue reads n (normalised) as a date or an ISO date and time:
// the date's readings and the time in minutes after midnight (-1 when
// there is none); false when n is neither.
func parseDateValue(n string) ([]civilDate, int, bool) {
	minute := -1
	if m := dateTimeValue.FindStringSubmatch(n); m != nil {
		h, _ := strconv.Atoi(m[2])
		mm, _ := strconv.Atoi(m[3])
		n, minute = m[1], h*60+mm
	}
	for _, re := range valueDates {
		if m := re.FindStringSubmatch(n); m != nil {
			ds := datesOf(re, m)
			return ds, minute, len(ds) > 0
		}
	}
	return nil, 0, false
}

// datesOf returns the valid dates a match of re can mean.
func datesOf(re *regexp.Regexp, m []string) []civilDate {
	g := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" {
			g[name] = m[i]
		}
	}
	y := atoi(g["y"])
	if len(g["y"]) == 2 {
		y += 2000
	}
	if g["n1"] != "" {
		return validDates(civilDate{y, atoi(g["n2"]), atoi(g["n1"])}, civilDate{y, atoi(g["n1"]), atoi(g["n2"])})
	}
	month, ok := months[g["m"][:min(3, len(g["m"]))]]
	if !ok {
		month = atoi(g["m"])
	}
	return validDates(civilDate{y, month, atoi(g["d"])})
}

// validDates keeps the dates that exist.
func validDates(ds ...civilDate) []civilDate {
	var out []civilDate
	for _, d := range ds {
		t := time.Date(d.y, time.Month(d.m), d.d, 0, 0, 0, 0, time.UTC)
		if d.m >= 1 && d.m <= 12 && t.Day() == d.d && t.Month() == time.Month(d.m) {
			out = append(out, d)
		}
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// scanTimes calls add with every time of day of text (normalised), in
// minutes after midnight: "14:02", "9.30", "10am", "10 p.m.", "noon".
func scanTimes(text string, add func(int)) {
	for _, m := range textTimes.FindAllStringSubmatch(text, -1) {
		h, mm := atoi(m[1]), atoi(m[2])
		if m[2] == "" && m[3] == "" {
			continue // a bare number is no time
		}
		switch {
		case strings.HasPrefix(m[3], "p") && h < 12:
			h += 12
		case strings.HasPrefix(m[3], "a") && h == 12:
			h = 0
		}
		if h < 24 && mm < 60 {
			add(h*60 + mm)
		}
	}
	if strings.Contains(text, "noon") {
		add(12 * 60)
	}
}
