package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxfit/ctxfit/config/settings"
	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a settings file must stay quiet before a
// [Watcher] reloads it.
const DefaultDebounce = 20 * time.Millisecond

// WatchOptions configure [Watch]. The zero value, like a nil pointer, means
// the documented defaults. Watch copies the options.
type WatchOptions struct {
	// OnChange is called after a valid change has been loaded and Current
	// returns it; old is the settings it replaces. Calls come from the
	// watcher's goroutine, one at a time, and receive copies. OnChange must
	// not call Close (Close waits for it). Nil means no call.
	OnChange func(old, new settings.Config)
	// OnError is called when a reload fails (a malformed or invalid file, a
	// file removed) and when the file-system watch reports an error; the
	// previous settings stay in effect. Calls come from the watcher's
	// goroutine, one at a time; OnError must not call Close. Nil means no
	// call.
	OnError func(error)
	// Logger receives a record for every reload: Info for a change, with
	// the old and new values of the fields that changed (secrets redacted);
	// Error for a rejected change; Warn when the file is gone. Nil means
	// [slog.Default].
	Logger *slog.Logger
	// Debounce is how long the file must stay quiet before it is reloaded,
	// so a save that takes several writes is read once, whole. Zero means
	// [DefaultDebounce] (20 ms).
	Debounce time.Duration
	// Getenv looks up the CTXFIT_* variables, which win over the file on
	// every reload as they do in [Load]. Nil means [os.Getenv].
	Getenv func(string) string
}

// Watcher holds the current settings and reloads them when their file
// changes. Create one with [Watch]; the zero Watcher is not usable. Its
// methods are safe for concurrent use.
type Watcher struct {
	ctx    context.Context
	path   string // absolute
	anyEvt bool   // path is a symbolic link: reload on any event in its directory
	opts   WatchOptions
	fsw    *fsnotify.Watcher
	cur    atomic.Pointer[settings.Config]

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error // set by run before done closes
}

// Watch loads the settings as [Load] does, from the file at path (or, when
// path is empty, at CTXFIT_CONFIG) and the environment, then watches the
// file's directory and reloads the settings after every change, until ctx is
// done or Close is called. A valid change replaces the current settings and
// is passed to opts.OnChange; an invalid one is logged and passed to
// opts.OnError, and the current settings stay. Watching the directory rather
// than the file follows editors that save by renaming a new file over the
// old one, files deleted and written again, and (when the path is a symbolic
// link) Kubernetes ConfigMap updates.
//
// Watch returns an error, and starts nothing, when there is no file to
// watch, the first load fails, or the directory cannot be watched.
func Watch(ctx context.Context, path string, opts *WatchOptions) (*Watcher, error) {
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if path == "" {
		path = strings.TrimSpace(o.Getenv(EnvConfig))
	}
	if path == "" {
		return nil, fmt.Errorf("config: nothing to watch: pass the settings file's path to Watch or set %s", EnvConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("config: watch %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: watch %s: %w", path, err)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("config: watch %s: %w (raise fs.inotify.max_user_instances if it is exhausted)", abs, err)
	}
	// Watch before the first load, so no change between the two is missed.
	if err := fsw.Add(filepath.Dir(abs)); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("config: watch the directory of %s: %w", abs, err)
	}
	c, err := Load(abs, o.Getenv)
	if err != nil {
		fsw.Close()
		return nil, err
	}
	fi, err := os.Lstat(abs)
	w := &Watcher{
		ctx:    context.WithoutCancel(ctx),
		path:   abs,
		anyEvt: err == nil && fi.Mode()&fs.ModeSymlink != 0,
		opts:   o,
		fsw:    fsw,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	w.cur.Store(&c)
	o.Logger.InfoContext(ctx, "config: watching the settings file", "path", abs, "debounce", o.Debounce)
	go w.run(ctx)
	return w, nil
}

// Current returns a copy of the settings in effect.
func (w *Watcher) Current() settings.Config { return clone(*w.cur.Load()) }

// Close stops watching and waits for the watcher's goroutine to end; a
// reload in progress completes first. It returns the error of closing the
// file-system watch, and nil on later calls. Current keeps working.
func (w *Watcher) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.stop)
		<-w.done
		err = w.closeErr
	})
	return err
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	defer func() { w.closeErr = w.fsw.Close() }()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.anyEvt || filepath.Clean(ev.Name) == w.path {
				timer.Reset(w.opts.Debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			err = fmt.Errorf("config: watch %s: %w (changes may be missed; a reload happens now)", w.path, err)
			w.opts.Logger.ErrorContext(w.ctx, "config: watch error", "path", w.path, "error", err)
			if w.opts.OnError != nil {
				w.opts.OnError(err)
			}
			timer.Reset(w.opts.Debounce) // an overflow may have dropped the event
		case <-timer.C:
			w.reload()
		}
	}
}

// reload loads the settings again and applies them if they are valid and
// different.
func (w *Watcher) reload() {
	c, err := Load(w.path, w.opts.Getenv)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.opts.Logger.WarnContext(w.ctx, "config: settings file gone; keeping the current settings until it is written again", "path", w.path, "error", err)
		} else {
			w.opts.Logger.ErrorContext(w.ctx, "config: reload rejected; keeping the current settings", "path", w.path, "error", err)
		}
		if w.opts.OnError != nil {
			w.opts.OnError(err)
		}
		return
	}
	old := *w.cur.Load()
	keys := changed(old, c)
	if len(keys) == 0 {
		w.opts.Logger.DebugContext(w.ctx, "config: settings file touched; settings unchanged", "path", w.path)
		return
	}
	w.cur.Store(&c)
	oldAttrs, newAttrs := fieldAttrs(old, keys), fieldAttrs(c, keys)
	w.opts.Logger.InfoContext(w.ctx, "config: settings reloaded", "path", w.path, "changed", keys,
		slog.Group("old", oldAttrs...), slog.Group("new", newAttrs...))
	if w.opts.OnChange != nil {
		w.opts.OnChange(clone(old), clone(c))
	}
}

// fieldAttrs returns the fields of c named by keys as log attributes,
// secrets redacted and durations written as such.
func fieldAttrs(c settings.Config, keys []string) []any {
	v := reflect.ValueOf(Redacted(c))
	t := v.Type()
	var attrs []any
	for i := range t.NumField() {
		key := tagName(t.Field(i).Tag.Get("json"))
		for _, k := range keys {
			if k != key {
				continue
			}
			val := v.Field(i).Interface()
			if d, ok := val.(settings.Duration); ok {
				val = time.Duration(d).String()
			}
			attrs = append(attrs, slog.Any(key, val))
		}
	}
	return attrs
}
