package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionPrintsTheBuild(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		t.Run(arg+" prints one line with the version, revision and toolchain", func(t *testing.T) {
			code, out, errOut := runCLI(t, "", arg)
			assert.Equal(t, 0, code, errOut)
			assert.Regexp(t, `^ctxfit \S+ \([^)]+\) `+runtime.Version()+` `+runtime.GOOS+`/`+runtime.GOARCH+"\n$", out)
		})
	}
	t.Run("version with an argument is a usage error", func(t *testing.T) {
		code, _, errOut := runCLI(t, "", "version", "extra")
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "takes no arguments")
	})
}
