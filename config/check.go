package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxfit/ctxfit/config/settings"
)

// Check is what [Inspect] found: the settings that every source gives
// together, where each came from, and every problem on the way.
//
// A Check is a plain value. Its Config holds secrets; show it only through
// [Redacted], as [Check.Settings] does.
type Check struct {
	// Config is the merged settings: the file, then the variables. When a
	// source fails, the others still apply, so that the rest is checked too.
	// It is valid only when Errors is empty.
	Config settings.Config
	// File is the settings file read (the path argument or CTXFIT_CONFIG);
	// empty means none.
	File string
	// Errors lists every problem: the file's (each member's that does not
	// decode, or one when the file cannot be read or parsed at all), each
	// malformed variable's, and each rule the merged settings break. Empty
	// means the settings are valid.
	Errors []error
	// Warnings lists what is valid but unsafe: each secret written in the
	// file (secret, previousSecrets, a password in redisURL), which belongs
	// in the environment, not in a file that is copied, backed up and
	// committed. They do not make the settings invalid. Empty means none.
	Warnings []string

	env     map[string]string // field name → the variable that set it
	badFile bool              // the file could not be read or decoded
}

// Setting is one top-level setting as [Check.Settings] reports it.
type Setting struct {
	// Key is the file key, e.g. "hardCap".
	Key string
	// Value is the effective value as YAML would write it in a file
	// (3000, 10m, "[redacted]"), secrets redacted; empty when the setting is
	// unset and its default is not a value (a random secret, no Redis).
	Value string
	// Source is where the value came from: "default", "file" or the
	// variable's name, e.g. "CTXFIT_HARD_CAP".
	Source string
	// Default describes the default when Source is "default", e.g.
	// "random per process"; empty otherwise.
	Default string
}

// Inspect loads the settings as [Load] does (path, or CTXFIT_CONFIG when it
// is empty, then the CTXFIT_* variables; getenv nil means os.Getenv) but
// does not stop at the first problem: it returns what it found, with every
// error, for `ctxfit config check`.
func Inspect(path string, getenv func(string) string) Check {
	if getenv == nil {
		getenv = os.Getenv
	}
	if path == "" {
		path = strings.TrimSpace(getenv(EnvConfig))
	}
	ch := Check{File: path, env: map[string]string{}}
	if path != "" {
		c, err := readFile(path)
		if err != nil {
			ch.badFile = true
			ch.Errors = append(ch.Errors, splitFileError(path, err)...)
		} else {
			ch.Config = c
			ch.Warnings = fileSecrets(path, c)
		}
	}
	// Each variable on its own, so that one malformed variable does not hide
	// the others' values.
	for _, v := range envVars {
		if v.Field == "" || getenv(v.Name) == "" {
			continue
		}
		c, set, err := overlayEnv(ch.Config, func(name string) string {
			if name == v.Name {
				return getenv(name)
			}
			return ""
		})
		if err != nil {
			ch.Errors = append(ch.Errors, err)
			continue
		}
		if len(set) > 0 {
			ch.Config = c
			ch.env[v.Field] = v.Name
		}
	}
	if err := ch.Config.Validate(); err != nil {
		for _, msg := range strings.Split(strings.TrimPrefix(err.Error(), "ctxfit: config: "), "; ") {
			ch.Errors = append(ch.Errors, errors.New("config: "+msg))
		}
	}
	return ch
}

// splitFileError returns each of the errors a settings file's error joins
// (one per member of a JSON file that does not decode), each naming the
// file.
func splitFileError(path string, err error) []error {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, fmt.Errorf("config: %s: %w", path, e))
	}
	return out
}

// fileSecrets returns a warning for each secret the file at path holds.
func fileSecrets(path string, c settings.Config) []string {
	var out []string
	warn := func(key, env string) {
		out = append(out, fmt.Sprintf("%s writes %s in the file: remove it and set %s in the environment (a secret in a file ends up in copies, backups and commits)", path, key, env))
	}
	if c.Secret != "" {
		warn("the secret", "CTXFIT_SECRET")
	}
	if len(c.PreviousSecrets) > 0 {
		warn("previousSecrets", "CTXFIT_PREVIOUS_SECRETS")
	}
	if u, err := url.Parse(c.RedisURL); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			warn("a password in redisURL", EnvRedisURL)
		}
	}
	return out
}

// Settings returns the top-level settings in the order of [EnvVars], with
// their effective values (defaults filled in), secrets redacted. It returns
// nil when the settings file could not be read or decoded: its values are
// unknown, and listing the defaults in their place would mislead.
func (ch Check) Settings() []Setting {
	if ch.badFile {
		return nil
	}
	c := Redacted(ch.Config)
	rv := reflect.ValueOf(c)
	var out []Setting
	for _, v := range envVars {
		if v.Field == "" {
			continue
		}
		s := Setting{Key: v.Key, Source: "file"}
		f := fieldOf(rv, v.Field)
		if name, ok := ch.env[v.Field]; ok {
			s.Source = name
		} else if f.IsZero() {
			s.Source = "default"
		}
		if f.IsZero() {
			s.Value, s.Default = defaultValue(v, c)
		} else {
			s.Value = formatValue(f)
		}
		out = append(out, s)
	}
	return out
}

// defaultValue returns the value a zero field takes, or, when the default
// is not a value, "" and what it means.
func defaultValue(v EnvVar, c settings.Config) (value, meaning string) {
	switch v.Field {
	case "HardCap":
		return fmt.Sprint(max(settings.DefaultHardCap, c.Threshold)), ""
	case "MaxResultSizeChars":
		hardCap := c.HardCap
		if hardCap == 0 {
			hardCap = max(settings.DefaultHardCap, c.Threshold)
		}
		return fmt.Sprint(settings.ResultSizeCharsPerToken * hardCap), "8 x the hard cap"
	case "CatalogBudget":
		hardCap := c.HardCap
		if hardCap == 0 {
			hardCap = max(settings.DefaultHardCap, c.Threshold)
		}
		return fmt.Sprint(hardCap), "the hard cap"
	case "ToolBudget", "CatalogTools":
		return "", v.Default
	case "Secret", "PreviousSecrets", "RedisURL", "Wrapper.MetricsFile", "Wrapper.LogFile":
		return "", v.Default
	}
	var d settings.Config
	f := fieldOf(reflect.ValueOf(&d).Elem(), v.Field)
	if err := setField(f, v, strings.Fields(v.Default)[0]); err != nil {
		return v.Default, "" // cannot happen: the table's defaults parse
	}
	return formatValue(f), ""
}

// formatValue writes a field's value as YAML writes it in a file.
func formatValue(f reflect.Value) string {
	var v any
	switch x := f.Interface().(type) {
	case settings.Duration:
		v = shortDuration(time.Duration(x))
	case *bool:
		v = x != nil && *x
	case []string:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = yamlString(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	default:
		v = x
	}
	if s, ok := v.(string); ok {
		return yamlString(s)
	}
	return fmt.Sprint(v)
}

// yamlString writes s as a YAML scalar, quoted when YAML would read it
// otherwise.
func yamlString(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}
