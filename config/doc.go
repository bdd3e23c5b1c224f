// Package config reads, merges and watches the settings of the guard, a
// [settings.Config], from the places an operator keeps them: defaults, a JSON
// or YAML file, and CTXFIT_* environment variables.
//
// # Sources and precedence
//
// [Load] starts from the defaults (the zero [settings.Config]), applies the
// file named by its path argument or, when that is empty, by CTXFIT_CONFIG,
// then the environment variables; later sources win. The result is checked
// with [settings.Config.Validate] once, after merging, so a file may rely on a
// variable to complete it. [LoadFile] and [FromEnv] each apply one source and
// validate; [Parse] reads a document from memory.
//
// Files are strict: an unknown field, a second document or trailing data is
// an error, so a misspelt setting never silently falls back to its default.
// The format follows the extension (.json, .yaml, .yml) or, for any other
// name, the first non-blank byte ('{' means JSON). Durations are Go duration
// strings such as "10m"; JSON also reads a number of seconds. testdata holds
// a complete example of each format.
//
// The variables, their fields and their defaults are listed by [EnvVars];
// the configuration table of docs/configuration.md is [EnvMarkdown]'s output. [Schema] is
// the file's JSON Schema (config/schema.json, generated from the Go types by
// go generate), for editors. [Inspect] loads like [Load] but collects every
// error and reports where each effective setting came from: it is
// `ctxfit config check`.
//
// # Errors
//
// Every error starts with "config:", names where the bad value came from (the
// file and line, or the variable), the field and the rule, and what to write
// instead. Secrets are never echoed, neither in errors nor in logs: [Redacted]
// blanks them.
//
// # Hot reload
//
// [Watch] loads the settings, then reloads them whenever the file changes and
// hands a valid change to [WatchOptions.OnChange]; the engine swaps its
// settings atomically, so in-flight requests finish on the old ones. An
// invalid change is logged and reported to [WatchOptions.OnError], and the
// previous settings stay in effect. The watcher observes the file's directory,
// so editors that save by writing a temporary file and renaming it over the
// original, and files deleted and written again, are followed.
//
// A change takes effect within the debounce interval (20 ms by default) plus
// the file-system notification latency (typically under a millisecond with
// inotify) plus the time to parse the file (tens of microseconds): well within
// 100 ms.
package config
