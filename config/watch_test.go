package config_test

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

// within bounds how long a test waits for a reload. The expected time is
// far lower (debounce 20 ms plus notification latency, well under 100 ms);
// the margin absorbs -race and loaded CI machines. Speed is not asserted
// here.
const within = 2 * time.Second

type change struct{ old, new ctxfit.Config }

// watched is a running Watcher with what it reported.
type watched struct {
	*config.Watcher
	path    string
	changes chan change
	errs    chan error
	log     *syncbuf.Buffer
}

// watch writes content to a fresh ctxfit.yaml and watches it.
func watch(t *testing.T, content string, getenv func(string) string) *watched {
	t.Helper()
	w := &watched{
		path:    writeFile(t, "ctxfit.yaml", content),
		changes: make(chan change, 100),
		errs:    make(chan error, 100),
		log:     &syncbuf.Buffer{},
	}
	var err error
	w.Watcher, err = config.Watch(t.Context(), w.path, &config.WatchOptions{
		OnChange: func(old, new ctxfit.Config) { w.changes <- change{old, new} },
		OnError:  func(err error) { w.errs <- err },
		Logger:   slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv:   getenv,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	return w
}

// waitChange returns the first change whose new settings satisfy ok.
func (w *watched) waitChange(t *testing.T, ok func(ctxfit.Config) bool) change {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case c := <-w.changes:
			if ok(c.new) {
				return c
			}
		case <-deadline:
			require.FailNow(t, "OnChange did not fire in time", "log:\n%s", w.log)
		}
	}
}

// waitError returns the first reported error containing substr.
func (w *watched) waitError(t *testing.T, substr string) error {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case err := <-w.errs:
			if strings.Contains(err.Error(), substr) {
				return err
			}
		case <-deadline:
			require.FailNow(t, "OnError did not fire in time", "want %q; log:\n%s", substr, w.log)
		}
	}
}

// writeAtomic saves content the way editors do: a temporary file renamed
// over path.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".ctxfit.yaml.swp")
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func threshold(n int) func(ctxfit.Config) bool {
	return func(c ctxfit.Config) bool { return c.Threshold == n }
}

func TestWatch(t *testing.T) {
	t.Run("a file written in place takes effect", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", nil)
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, w.Current())

		require.NoError(t, os.WriteFile(w.path, []byte("threshold: 2000\n"), 0o600))
		c := w.waitChange(t, threshold(2000))
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, c.old)
		assert.Equal(t, ctxfit.Config{Threshold: 2000}, w.Current())
	})

	t.Run("a file renamed over the original (an atomic save) takes effect", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", nil)
		writeAtomic(t, w.path, "threshold: 3000\n")
		c := w.waitChange(t, threshold(3000))
		assert.Equal(t, 1000, c.old.Threshold)

		writeAtomic(t, w.path, "threshold: 4000\n")
		c = w.waitChange(t, threshold(4000))
		assert.Equal(t, 3000, c.old.Threshold, "the watch survives the first rename")
	})

	t.Run("an invalid change is rejected and the previous settings stay", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", nil)
		writeAtomic(t, w.path, "threshold: 1000\nhardCap: 10\n")
		err := w.waitError(t, "hardCap 10 must be >= threshold 1000")
		assert.True(t, strings.HasPrefix(err.Error(), "config: invalid settings from "+w.path), err.Error())
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, w.Current())
		assert.Empty(t, w.changes, "OnChange is not called")
		assert.Contains(t, w.log.String(), "level=ERROR")
		assert.Contains(t, w.log.String(), "hardCap 10 must be")

		writeAtomic(t, w.path, "threshold: 1000\nunknown: 1\n")
		w.waitError(t, `unknown field "unknown"`)
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, w.Current())

		writeAtomic(t, w.path, "threshold: 1500\n")
		c := w.waitChange(t, threshold(1500))
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, c.old, "the change is from the last valid settings")
	})

	t.Run("a removed file keeps the settings until it is written again", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", nil)
		require.NoError(t, os.Remove(w.path))
		err := w.waitError(t, "no such file")
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, w.Current())
		assert.Contains(t, w.log.String(), "level=WARN")

		require.NoError(t, os.WriteFile(w.path, []byte("threshold: 5000\nhardCap: 20000\n"), 0o600))
		c := w.waitChange(t, threshold(5000))
		assert.Equal(t, ctxfit.Config{Threshold: 1000}, c.old)
		assert.Equal(t, ctxfit.Config{Threshold: 5000, HardCap: 20000}, w.Current())
	})

	t.Run("variables keep winning over the file on reload", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", env(map[string]string{"CTXFIT_THRESHOLD": "2500"}))
		assert.Equal(t, 2500, w.Current().Threshold)
		writeAtomic(t, w.path, "threshold: 1000\npageSize: 7\n")
		c := w.waitChange(t, func(c ctxfit.Config) bool { return c.PageSize == 7 })
		assert.Equal(t, ctxfit.Config{Threshold: 2500, PageSize: 7}, c.new)
	})

	t.Run("a reload is logged with old and new values, secrets redacted", func(t *testing.T) {
		w := watch(t, "threshold: 1000\nsecret: "+secretA+"\n", nil)
		writeAtomic(t, w.path, "threshold: 2000\nsecret: "+secretB+"\npreviousSecrets: ["+secretA+"]\ncursorTTL: 90s\n")
		w.waitChange(t, threshold(2000))
		log := w.log.String()
		assert.Contains(t, log, "config: settings reloaded")
		assert.Contains(t, log, "changed=\"[threshold cursorTTL secret previousSecrets]\"")
		assert.Contains(t, log, "old.threshold=1000")
		assert.Contains(t, log, "new.threshold=2000")
		assert.Contains(t, log, "new.cursorTTL=1m30s")
		assert.Contains(t, log, "new.secret=[redacted]")
		assert.NotContains(t, log, secretA)
		assert.NotContains(t, log, secretB)
	})

	t.Run("a save that changes nothing calls nothing", func(t *testing.T) {
		w := watch(t, "threshold: 1000\n", nil)
		writeAtomic(t, w.path, "threshold: 1000 # same\n")
		writeAtomic(t, w.path, "threshold: 1001\n")
		c := w.waitChange(t, threshold(1001))
		assert.Equal(t, 1000, c.old.Threshold)
		assert.Empty(t, w.changes, "the unchanged save was not delivered")
	})

	t.Run("Current returns a copy", func(t *testing.T) {
		w := watch(t, "previousSecrets: ["+secretA+"]\n", nil)
		c := w.Current()
		c.PreviousSecrets[0] = "changed"
		assert.Equal(t, []string{secretA}, w.Current().PreviousSecrets)
	})
}

// assertGoroutinesEnd waits until no more goroutines run than before.
// (Not assert.Eventually: it runs its condition on a goroutine of its own.)
func assertGoroutinesEnd(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines are left running")
}

func TestWatchStops(t *testing.T) {
	t.Run("Close ends the goroutines and later changes are ignored", func(t *testing.T) {
		before := runtime.NumGoroutine()
		w := watch(t, "threshold: 1000\n", nil)
		require.NoError(t, w.Close())
		assertGoroutinesEnd(t, before)

		writeAtomic(t, w.path, "threshold: 2000\n")
		time.Sleep(10 * config.DefaultDebounce) // only to give a stray reload the chance to show
		assert.Empty(t, w.changes)
		assert.Equal(t, 1000, w.Current().Threshold, "Current works after Close")
		assert.NoError(t, w.Close(), "a second Close is a no-op")
	})

	t.Run("a done context ends the goroutines", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(t.Context())
		path := writeFile(t, "ctxfit.yaml", "threshold: 1000\n")
		w, err := config.Watch(ctx, path, &config.WatchOptions{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		cancel()
		assertGoroutinesEnd(t, before)
		assert.NoError(t, w.Close())
	})
}

func TestWatchErrors(t *testing.T) {
	quiet := &config.WatchOptions{Logger: slog.New(slog.DiscardHandler)}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		path string
		opts *config.WatchOptions
		want string
	}{
		{"no path and no CTXFIT_CONFIG is an error", context.Background(), "",
			&config.WatchOptions{Getenv: env(nil)}, "config: nothing to watch: pass the settings file's path to Watch or set CTXFIT_CONFIG"},
		{"a missing file is an error", context.Background(), filepath.Join(t.TempDir(), "absent.yaml"), quiet, "no such file"},
		{"a missing directory is an error", context.Background(), filepath.Join(t.TempDir(), "absent", "c.yaml"), quiet, "config: watch the directory of"},
		{"an invalid first load is an error", context.Background(), writeFile(t, "c.yaml", "hardCap: 1\n"), quiet, "hardCap 1 must be >= threshold 4000"},
		{"a done context is an error", canceled, writeFile(t, "c.yaml", "{}"), quiet, "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := config.Watch(tt.ctx, tt.path, tt.opts)
			require.Error(t, err)
			assert.Nil(t, w)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "config: "), err.Error())
		})
	}

	t.Run("CTXFIT_CONFIG names the file when the path is empty", func(t *testing.T) {
		path := writeFile(t, "c.json", `{"pageSize": 9}`)
		w, err := config.Watch(t.Context(), "", &config.WatchOptions{
			Getenv: env(map[string]string{"CTXFIT_CONFIG": path}),
			Logger: slog.New(slog.DiscardHandler),
		})
		require.NoError(t, err)
		defer w.Close()
		assert.Equal(t, 9, w.Current().PageSize)
	})
}
