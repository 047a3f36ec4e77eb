package wiring

import "runtime/debug"

// buildVersion is set at link time:
// -ldflags "-X github.com/twostep/twostep/wiring.buildVersion=v1.2.3".
var buildVersion = ""

// Version returns the link-time version, else the module version or VCS
// revision recorded by the Go toolchain, else "dev".
func Version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}
