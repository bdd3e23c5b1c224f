package config

import (
	"maps"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/ctxfit/ctxfit/config/settings"
)

// Load returns the settings from every source, validated once after merging:
// the defaults, then the file at path (or, when path is empty, at
// CTXFIT_CONFIG; with neither there is no file), then the CTXFIT_* variables,
// which win. getenv looks a variable up; nil means [os.Getenv].
//
// A path argument wins over CTXFIT_CONFIG, as a command-line flag usually
// does over the environment.
func Load(path string, getenv func(string) string) (settings.Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if path == "" {
		path = strings.TrimSpace(getenv(EnvConfig))
	}
	var (
		c       settings.Config
		sources []string
	)
	if path != "" {
		var err error
		if c, err = readFile(path); err != nil {
			return settings.Config{}, err
		}
		sources = append(sources, path)
	}
	c, set, err := overlayEnv(c, getenv)
	if err != nil {
		return settings.Config{}, err
	}
	if err := c.Validate(); err != nil {
		sources = append(sources, set...)
		src := "the defaults"
		if len(sources) > 0 {
			src = strings.Join(sources, ", ")
		}
		return settings.Config{}, &invalidError{source: src, err: err}
	}
	return c, nil
}

// invalidError is a Config that failed Validate, with where it came from.
type invalidError struct {
	source string // a file, a list of variables, or both
	err    error  // from settings.Config.Validate
}

func (e *invalidError) Error() string {
	return "config: invalid settings from " + e.source + ": " +
		strings.TrimPrefix(e.err.Error(), "ctxfit: config: ")
}

func (e *invalidError) Unwrap() error { return e.err }

// redacted replaces secrets in logs.
const redacted = "[redacted]"

// Redacted returns a copy of c fit for logs: a set Secret and every entry of
// PreviousSecrets read "[redacted]", so a log still shows whether secrets are
// set and how many, and RedisURL's password reads "xxxxx" (the whole URL
// "[redacted]" if it does not parse). The copy does not validate; use it
// only for display.
func Redacted(c settings.Config) settings.Config {
	c = clone(c)
	if c.Secret != "" {
		c.Secret = redacted
	}
	for i := range c.PreviousSecrets {
		c.PreviousSecrets[i] = redacted
	}
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err == nil {
			c.RedisURL = u.Redacted()
		} else {
			c.RedisURL = redacted
		}
	}
	return c
}

// clone returns a deep copy of c, sharing no slice or pointer with it.
func clone(c settings.Config) settings.Config {
	c.PreviousSecrets = slices.Clone(c.PreviousSecrets)
	c.Endpoints = slices.Clone(c.Endpoints)
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		e.Pagination = cloneBool(e.Pagination)
		e.Summary = cloneBool(e.Summary)
		e.Chunking = cloneBool(e.Chunking)
		e.SummaryFields = slices.Clone(e.SummaryFields)
		e.SummaryTopN = slices.Clone(e.SummaryTopN)
		if f := e.OutputFormat; f != nil {
			copied := *f
			copied.ExtractFields = slices.Clone(f.ExtractFields)
			copied.RequiredFields = slices.Clone(f.RequiredFields)
			copied.Transforms = maps.Clone(f.Transforms)
			e.OutputFormat = &copied
		}
	}
	c.Wrapper.CompactOutput = cloneBool(c.Wrapper.CompactOutput)
	c.CatalogTools = slices.Clone(c.CatalogTools)
	c.Gateway.Include = slices.Clone(c.Gateway.Include)
	c.Gateway.Exclude = slices.Clone(c.Gateway.Exclude)
	c.Gateway.Resources = slices.Clone(c.Gateway.Resources)
	c.Gateway.Names = maps.Clone(c.Gateway.Names)
	return c
}

func cloneBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// changed lists the JSON names of the fields that differ between a and b.
func changed(a, b settings.Config) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	var keys []string
	for i := range t.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			keys = append(keys, tagName(t.Field(i).Tag.Get("json")))
		}
	}
	return keys
}
