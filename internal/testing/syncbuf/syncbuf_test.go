package syncbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

func TestConcurrentWritesAreAllKept(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	assert.Len(t, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"), 800)
}
