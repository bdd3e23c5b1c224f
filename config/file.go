package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/config/settings"
	"go.yaml.in/yaml/v3"
)

// Format is the syntax of a settings document. The zero Format detects it.
type Format int

const (
	// FormatDetect reads a document whose first non-blank byte is '{' as
	// JSON, and anything else as YAML.
	FormatDetect Format = iota
	// FormatJSON reads JSON.
	FormatJSON
	// FormatYAML reads YAML 1.2 (with the YAML 1.1 booleans that yaml v3
	// still accepts).
	FormatYAML
)

// String returns "detect", "JSON" or "YAML".
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "JSON"
	case FormatYAML:
		return "YAML"
	case FormatDetect:
		return "detect"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf returns the format a file's extension names: FormatJSON for
// ".json", FormatYAML for ".yaml" and ".yml" (in any case), FormatDetect
// otherwise.
func FormatOf(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON
	case ".yaml", ".yml":
		return FormatYAML
	}
	return FormatDetect
}

// LoadFile reads the settings in the JSON or YAML file at path (see
// [FormatOf]) and validates them. Errors name the file and, where the decoder
// knows them, the line, the field and the rule; a missing file's error
// matches [fs.ErrNotExist].
func LoadFile(path string) (settings.Config, error) {
	c, err := readFile(path)
	if err != nil {
		return settings.Config{}, err
	}
	if err := c.Validate(); err != nil {
		return settings.Config{}, &invalidError{source: path, err: err}
	}
	return c, nil
}

// Parse reads the settings in data, a JSON or YAML document, and validates
// them. It is [LoadFile] for a document already in memory.
func Parse(data []byte, format Format) (settings.Config, error) {
	c, format, err := decode(data, format)
	if err != nil {
		return settings.Config{}, fmt.Errorf("config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return settings.Config{}, &invalidError{source: "the " + format.String() + " document", err: err}
	}
	return c, nil
}

// readFile reads and decodes path without validating.
func readFile(path string) (settings.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return settings.Config{}, fmt.Errorf("config: read settings file: %w (check the path given to Load or in %s)", err, EnvConfig)
	}
	c, _, err := decode(data, FormatOf(path))
	if err != nil {
		return settings.Config{}, fmt.Errorf("config: %s: %w", path, err)
	}
	return c, nil
}

// errEmpty rejects an empty document: during a hot reload it is most often a
// file caught half-written, and taking it for "all defaults" would drop every
// setting at once.
var errEmpty = errors.New(`the document is empty; write {} to mean "all defaults"`)

// decode parses data into a Config without validating, and returns the format
// it read. Its errors do not start with "config:"; the callers add it and
// the source.
func decode(data []byte, format Format) (settings.Config, Format, error) {
	trimmed := bytes.TrimSpace(data)
	if format == FormatDetect {
		format = FormatYAML
		if len(trimmed) > 0 && trimmed[0] == '{' {
			format = FormatJSON
		}
	}
	var (
		c   settings.Config
		err error
	)
	switch format {
	case FormatJSON:
		if len(trimmed) == 0 {
			return c, format, errEmpty
		}
		err = decodeJSON(data, &c)
	case FormatYAML:
		if len(trimmed) == 0 {
			return c, format, errEmpty
		}
		err = decodeYAML(data, &c)
	default:
		return c, format, fmt.Errorf("unknown format %v: use FormatDetect, FormatJSON or FormatYAML", format)
	}
	if err != nil {
		return settings.Config{}, format, err
	}
	return c, format, nil
}

// durationKeys are the JSON and YAML names of the Duration fields of Config.
var durationKeys = func() []string {
	var keys []string
	t := reflect.TypeFor[settings.Config]()
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == durationType {
			keys = append(keys, tagName(f.Tag.Get("json")))
		}
	}
	return keys
}()

func tagName(tag string) string { name, _, _ := strings.Cut(tag, ","); return name }

func decodeJSON(data []byte, c *settings.Config) error {
	// Check durations first: Duration's own errors do not name the field.
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		var errs []error
		for _, key := range durationKeys {
			for k, raw := range top {
				if !strings.EqualFold(k, key) {
					continue
				}
				var secs float64
				if json.Unmarshal(raw, &secs) == nil && math.Abs(secs) >= math.MaxInt64/float64(time.Second) {
					errs = append(errs, fmt.Errorf("field %s: %s seconds is out of range: want at most 2562047h (about 292 years)", key, raw))
					continue
				}
				var d settings.Duration
				if d.UnmarshalJSON(raw) != nil {
					errs = append(errs, fmt.Errorf(`field %s: %s is not a duration: want a Go duration string such as "10m" or "30s", or a number of seconds`, key, raw))
				}
			}
		}
		if len(errs) > 0 {
			return errors.Join(append(errs, memberErrors(data, durationKeys)...)...)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		if errs := memberErrors(data, nil); len(errs) > 1 {
			return errors.Join(errs...) // every member's error, not only the first
		}
		return jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(data, dec.InputOffset())
		return fmt.Errorf("line %d, column %d: unexpected data after the settings object: a file holds one JSON object", line, col)
	}
	return nil
}

// memberErrors decodes each member of the JSON object in data on its own
// and returns the error of each that fails, with its line and column in
// data; members whose key is in skip (case-insensitive) are left out. It
// returns nil when data is not a well-formed object.
func memberErrors(data []byte, skip []string) []error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var errs []error
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if slices.ContainsFunc(skip, func(s string) bool { return strings.EqualFold(s, key) }) {
			continue
		}
		start := dec.InputOffset() - int64(len(raw)) // where the value starts in data
		k, _ := json.Marshal(key)
		doc := append(append(append(append([]byte("{"), k...), ':'), raw...), '}')
		one := json.NewDecoder(bytes.NewReader(doc))
		one.DisallowUnknownFields()
		var c settings.Config
		err = one.Decode(&c)
		if err == nil {
			continue
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			typ.Offset += start - int64(len(k)+2) // from doc's offsets to data's
			errs = append(errs, jsonError(data, err))
			continue
		}
		line, col := position(data, start)
		errs = append(errs, fmt.Errorf("line %d, column %d: %w", line, col, jsonError(doc, err)))
	}
	return errs
}

// jsonError rewrites encoding/json's errors to name the line and the field.
func jsonError(data []byte, err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		line, col := position(data, syntax.Offset)
		return fmt.Errorf("line %d, column %d: %s: fix the JSON syntax", line, col, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		if typ.Field == "" {
			return fmt.Errorf("line %d, column %d: the settings must be a JSON object, not %s", line, col, typ.Value)
		}
		return fmt.Errorf("line %d, column %d: field %s: got %s, want %s", line, col, typ.Field, typ.Value, kindName(typ.Type))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("unexpected end of the document: the JSON object is incomplete")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		return fmt.Errorf("%s: remove it or correct its spelling (the keys are the JSON names of ctxfit.Config's fields)", msg)
	}
	return errors.New(msg)
}

// kindName names t the way a settings file's author thinks of it.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return t.String()
}

// position turns the offset just past an offending byte, as encoding/json
// reports it, into the byte's 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	i := int(min(max(off-1, 0), int64(len(data))))
	before := data[:i]
	line = bytes.Count(before, []byte("\n")) + 1
	col = i - bytes.LastIndexByte(before, '\n')
	return line, col
}

func decodeYAML(data []byte, c *settings.Config) (err error) {
	// yaml v3 panics with its own error type on bad input and recovers it;
	// recover anything else too, so a malformed file can never take the
	// process down during a hot reload.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML decoder failed (%v): simplify the document", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return yamlError(err)
	}
	if err := checkYAML(&doc); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return errEmpty // only comments
		}
		return yamlError(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return fmt.Errorf("line %d: a second YAML document: a file holds one document; remove the '---' and what follows", more.Line)
	}
	return nil
}

// checkYAML checks what yaml v3 would report badly: durations (whose errors
// carry no line or field) and secrets (whose type errors would echo part of
// the value).
func checkYAML(doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: the settings must be a mapping of keys to values, such as \"threshold: 4000\"", top.Line)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		switch {
		case (k.Value == "secret" || k.Value == "redisURL") && v.Kind != yaml.ScalarNode:
			return fmt.Errorf("line %d: field %s: want a string (value not shown)", v.Line, k.Value)
		case k.Value == "previousSecrets":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return fmt.Errorf("line %d: field previousSecrets: want a list of strings (value not shown)", v.Line)
			}
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode && e.Kind != yaml.AliasNode {
					return fmt.Errorf("line %d: field previousSecrets: want a list of strings (value not shown)", e.Line)
				}
			}
		}
		for _, key := range durationKeys {
			if k.Value != key || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				continue
			}
			if _, err := time.ParseDuration(v.Value); err != nil {
				return fmt.Errorf(`line %d: field %s: %q is not a duration: want a Go duration such as "10m" or "30s" (a bare number is not read as seconds in YAML; write "600s")`, v.Line, key, v.Value)
			}
		}
	}
	return nil
}

var yamlUnknown = regexp.MustCompile(`field (\S+) not found in type \S+`)

// yamlSettingsType matches the Go type yaml names in "cannot unmarshal !!seq
// into settings.Params": the settings types are known as ctxfit's
// (ctxfit.Params is settings.Params), and messages keep that name.
var yamlSettingsType = regexp.MustCompile(`( into \S*?)settings\.`)

// maxMessages bounds how many of a document's errors are listed.
const maxMessages = 5

// yamlError rewrites yaml v3's errors: "yaml: line 3: field foo not found in
// type settings.Config" becomes `line 3: unknown field "foo"`, and a long list
// is cut short.
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: fix the YAML syntax", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var (
		msgs    []string
		unknown bool
	)
	for _, m := range te.Errors {
		if yamlUnknown.MatchString(m) {
			unknown = true
			m = yamlUnknown.ReplaceAllString(m, `unknown field "$1"`)
		}
		m = yamlSettingsType.ReplaceAllString(m, "${1}ctxfit.")
		if !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	if n := len(msgs); n > maxMessages {
		msgs = append(msgs[:maxMessages], fmt.Sprintf("and %d more", n-maxMessages))
	}
	msg := strings.Join(msgs, "; ")
	if unknown {
		msg += ": remove unknown fields or correct their spelling (the keys are the YAML names of ctxfit.Config's fields)"
	}
	return errors.New(msg)
}
