// Package buildinfo reports which build of ctxfit is running: the module
// version and the version-control revision the Go toolchain stamps into every
// binary (runtime/debug.ReadBuildInfo), or the version a release build
// stamped with the linker.
//
// `ctxfit version` prints [Read]'s [Info.String]; a server that introduces
// itself to clients (the proxy's MCP Implementation.Version) uses
// [Info.Short].
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// The values a release build sets with the linker (scripts/release.sh does),
// for builds where the go command cannot stamp the VCS information itself
// (a git worktree, a source archive, -buildvcs=false):
//
//	-ldflags "-X github.com/ctxfit/ctxfit/internal/buildinfo.version=v1.2.3
//	          -X github.com/ctxfit/ctxfit/internal/buildinfo.revision=9e13e24...
//	          -X github.com/ctxfit/ctxfit/internal/buildinfo.modified=false"
//
// Empty means what the build information records.
var version, revision, modified string

// Stamp is what a release build stamped with the linker; empty fields stamp
// nothing.
type Stamp struct {
	// Version wins over the module version, e.g. "v1.2.3".
	Version string
	// Revision is the commit; it wins over vcs.revision.
	Revision string
	// Modified is "true" or "false"; it wins over vcs.modified.
	Modified string
}

// Devel is the version of a build whose module version is unknown: `go run`,
// `go test`, or a build outside version control.
const Devel = "(devel)"

// Info describes one build. The zero Info is a development build about which
// nothing is known; it is a plain value, safe to copy and share.
type Info struct {
	// Module is the main module's path, e.g. "github.com/ctxfit/ctxfit";
	// empty when unknown.
	Module string
	// Version is the main module's version: a release ("v1.2.3"), a
	// pseudo-version the go command derived from the checkout
	// ("v0.0.0-20261124055100-9e13e24abcde+dirty"), or [Devel].
	Version string
	// Revision is the commit the binary was built from (vcs.revision);
	// empty when unknown.
	Revision string
	// Time is the commit's time (vcs.time); zero when unknown.
	Time time.Time
	// Modified reports whether the working tree had uncommitted changes
	// (vcs.modified).
	Modified bool
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string
}

// Read returns the running binary's build information. It never fails: what
// the binary does not record is left empty.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	return FromBuildInfo(bi, ok, Stamp{Version: version, Revision: revision, Modified: modified})
}

// FromBuildInfo returns the Info that bi records; ok is ReadBuildInfo's second
// result (false: bi is ignored). What st stamps wins over what bi records.
func FromBuildInfo(bi *debug.BuildInfo, ok bool, st Stamp) Info {
	info := Info{Version: Devel, GoVersion: runtime.Version()}
	if ok && bi != nil {
		info.Module = bi.Main.Path
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time, _ = time.Parse(time.RFC3339, s.Value)
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if v := strings.TrimSpace(st.Version); v != "" {
		info.Version = v
	}
	if r := strings.TrimSpace(st.Revision); r != "" {
		info.Revision = r
	}
	if m := strings.TrimSpace(st.Modified); m != "" {
		info.Modified = m == "true"
	}
	return info
}

// Short returns the version alone, fit for a server's version field: the
// module version, or for a development build "devel", followed by
// "+REVISION" (its first 12 characters) when the revision is known and
// ".modified" when the tree was.
func (i Info) Short() string {
	if i.Version != "" && i.Version != Devel {
		return i.Version
	}
	s := "devel"
	if i.Revision != "" {
		s += "+" + shortRevision(i.Revision)
		if i.Modified {
			s += ".modified"
		}
	}
	return s
}

// String returns the line `ctxfit version` prints, for example
//
//	ctxfit v1.2.3 (revision 9e13e24abcde, 2026-11-24T05:51:00Z) go1.26.8 linux/amd64
//	ctxfit (devel) (revision 9e13e24abcde, modified) go1.26.8 linux/amd64
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("ctxfit ")
	b.WriteString(i.Version)
	if i.Version == "" {
		b.WriteString(Devel)
	}
	var vcs []string
	if i.Revision != "" {
		vcs = append(vcs, "revision "+shortRevision(i.Revision))
	}
	if !i.Time.IsZero() {
		vcs = append(vcs, i.Time.UTC().Format(time.RFC3339))
	}
	if i.Modified {
		vcs = append(vcs, "modified")
	}
	if len(vcs) == 0 {
		vcs = append(vcs, "revision unknown")
	}
	fmt.Fprintf(&b, " (%s)", strings.Join(vcs, ", "))
	if i.GoVersion != "" {
		fmt.Fprintf(&b, " %s", i.GoVersion)
	}
	fmt.Fprintf(&b, " %s/%s", runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func shortRevision(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
