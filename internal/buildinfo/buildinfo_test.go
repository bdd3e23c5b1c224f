package buildinfo_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/internal/buildinfo"
)

func buildInfo(version string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ctxfit/ctxfit", Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

const rev = "9e13e24abcdef0123456789abcdef0123456789a"

func TestFromBuildInfo(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name  string
		bi    *debug.BuildInfo
		ok    bool
		stamp buildinfo.Stamp
		short string
		line  string
	}{
		{
			name:  "a release installed with go install reports its module version",
			bi:    buildInfo("v1.2.3"),
			ok:    true,
			short: "v1.2.3",
			line:  "ctxfit v1.2.3 (revision unknown) go1.26.8",
		},
		{
			name:  "a build from a clean checkout reports the revision and its time",
			bi:    buildInfo("v0.0.0-20261124055100-9e13e24abcde", "vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-24T05:51:00Z", "vcs.modified", "false"),
			ok:    true,
			short: "v0.0.0-20261124055100-9e13e24abcde",
			line:  "ctxfit v0.0.0-20261124055100-9e13e24abcde (revision 9e13e24abcde, 2026-11-24T05:51:00Z) go1.26.8",
		},
		{
			name:  "a development build of a modified tree says so",
			bi:    buildInfo("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
			ok:    true,
			short: "devel+9e13e24abcde.modified",
			line:  "ctxfit (devel) (revision 9e13e24abcde, modified) go1.26.8",
		},
		{
			name:  "a version stamped by the release script wins over the module version",
			bi:    buildInfo("(devel)", "vcs.revision", rev),
			ok:    true,
			stamp: buildinfo.Stamp{Version: "v2.0.0"},
			short: "v2.0.0",
			line:  "ctxfit v2.0.0 (revision 9e13e24abcde) go1.26.8",
		},
		{
			name:  "a release script's stamp fills in what a build without VCS information lacks",
			bi:    buildInfo("(devel)"),
			ok:    true,
			stamp: buildinfo.Stamp{Version: "v0.0.0-9e13e24abcde-dirty", Revision: rev, Modified: "true"},
			short: "v0.0.0-9e13e24abcde-dirty",
			line:  "ctxfit v0.0.0-9e13e24abcde-dirty (revision 9e13e24abcde, modified) go1.26.8",
		},
		{
			name:  "a binary without build information is a development build",
			ok:    false,
			short: "devel",
			line:  "ctxfit (devel) (revision unknown) " + runtime.Version(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := buildinfo.FromBuildInfo(tc.bi, tc.ok, tc.stamp)
			assert.Equal(t, tc.short, info.Short())
			assert.Equal(t, tc.line+platform, info.String())
		})
	}
}

func TestFromBuildInfoReadsEveryField(t *testing.T) {
	info := buildinfo.FromBuildInfo(buildInfo("v1.0.0", "vcs.revision", rev, "vcs.time", "2026-11-24T05:51:00Z", "vcs.modified", "true"), true, buildinfo.Stamp{})
	assert.Equal(t, buildinfo.Info{
		Module:    "github.com/ctxfit/ctxfit",
		Version:   "v1.0.0",
		Revision:  rev,
		Time:      time.Date(2026, 11, 24, 5, 51, 0, 0, time.UTC),
		Modified:  true,
		GoVersion: "go1.26.8",
	}, info)
}

func TestReadNeverLeavesTheVersionEmpty(t *testing.T) {
	info := buildinfo.Read()
	assert.NotEmpty(t, info.Version)
	assert.NotEmpty(t, info.Short())
	assert.NotEmpty(t, info.GoVersion)
}

func ExampleInfo_Short() {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ctxfit/ctxfit", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}
	fmt.Println(buildinfo.FromBuildInfo(bi, true, buildinfo.Stamp{}).Short())
	fmt.Println(buildinfo.FromBuildInfo(bi, true, buildinfo.Stamp{Version: "v1.2.3"}).Short())
	// Output:
	// devel+9e13e24abcde.modified
	// v1.2.3
}
