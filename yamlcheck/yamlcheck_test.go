package yamlcheck

import (
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type inner struct {
	Method  string            `yaml:"method"`
	Timeout time.Duration     `yaml:"timeout"`
	Headers map[string]string `yaml:"headers"`
}

type shared struct {
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
}

type file struct {
	Limits struct {
		shared  `yaml:",inline"`
		Workers int `yaml:"workers"`
	} `yaml:"limits"`
	Actions []inner   `yaml:"actions"`
	Raw     yaml.Node `yaml:"raw"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"valid", "limits:\n  maxBodyBytes: 5\nactions:\n  - method: GET\n    timeout: 2s\n", nil},
		{"misspelt inline key", "limits:\n  maxBodyByts: 5\n",
			[]string{`line 2: limits.maxBodyByts: unknown key "maxBodyByts"; did you mean "maxBodyBytes"?`}},
		{"key of other case", "limits:\n  Workers: 5\n",
			[]string{`line 2: limits.Workers: unknown key "Workers"; did you mean "workers"?`}},
		{"no close key", "limits:\n  colour: red\n",
			[]string{`line 2: limits.colour: unknown key "colour" (known keys: maxBodyBytes, workers)`}},
		{"in a list item", "actions:\n  - method: GET\n  - methd: POST\n",
			[]string{`line 3: actions[1].methd: unknown key "methd"; did you mean "method"?`}},
		{"wrong kinds", "limits:\n  workers: many\nactions:\n  - timeout: soon\n",
			[]string{`line 2: limits.workers: "many" is a string; want a whole number`,
				`line 4: actions[0].timeout: "soon" is a string; want a duration such as 30s or 2m`}},
		{"swapped letters", "actions:\n  - mehtod: GET\n",
			[]string{`line 2: actions[0].mehtod: unknown key "mehtod"; did you mean "method"?`}},
		{"a list for a mapping", "limits: [1, 2]\nactions:\n  - headers: [a]\n",
			[]string{`line 1: limits: a list given; want a mapping of keys to values`,
				`line 3: actions[0].headers: a list given; want a mapping of keys to values`}},
		{"a node field takes anything", "raw:\n  anything: [1, 2]\n", nil},
		{"map values are not keys", "actions:\n  - headers:\n      X-Anything: v\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var root yaml.Node
			if err := yaml.Unmarshal([]byte(tt.src), &root); err != nil {
				t.Fatal(err)
			}
			var out file
			if got := Strings(Decode(&root, "", &out)); !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDecodeSectionKeepsFileLines(t *testing.T) {
	t.Parallel()
	var doc struct {
		Actions yaml.Node `yaml:"actions"`
	}
	if err := yaml.Unmarshal([]byte("# a comment\n\nactions:\n  - method: GET\n\n    methd: POST\n"), &doc); err != nil {
		t.Fatal(err)
	}
	var out []inner
	got := Strings(Decode(&doc.Actions, "actions", &out))
	want := []string{`line 6: actions[0].methd: unknown key "methd"; did you mean "method"?`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLineOf(t *testing.T) {
	t.Parallel()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("a:\n  - x: 1\n  - x: 2\n    h:\n      Auth: v\n"), &root); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"a": 2, "a[1]": 3, "a[1].h.Auth": 5, "a[2]": 0, "b": 0} {
		if got := LineOf(&root, path); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", path, got, want)
		}
	}
}
