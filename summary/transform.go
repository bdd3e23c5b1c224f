package summary

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// fieldTransform is a compiled entry of [Format.FieldTransforms].
type fieldTransform struct {
	path []string // the path's segments
	name string
	fn   func(v any) (string, error)
}

// fieldTransform compiles the transform name for path.
func (f *Formatter) fieldTransform(path, name string) (fieldTransform, error) {
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return fieldTransform{}, fmt.Errorf("transform path %q has an empty segment; write paths such as \"nodes.created_at\"", path)
		}
	}
	t := fieldTransform{path: segs, name: name}
	base, arg, hasArg := strings.Cut(name, ":")
	switch {
	case base == TransformRelativeTime && !hasArg:
		t.fn = func(v any) (string, error) { return relativeTime(v, f.now()) }
	case base == TransformTruncateUUID && !hasArg:
		t.fn = func(v any) (string, error) { return truncateUUID(v), nil }
	case base == TransformTruncateText && hasArg:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 4 {
			return fieldTransform{}, fmt.Errorf("transform %q of %q: truncateText takes a number of characters of at least 4, as in \"truncateText:80\"", name, path)
		}
		t.fn = func(v any) (string, error) { return truncateFunc(n, v), nil }
	default:
		return fieldTransform{}, fmt.Errorf("transform %q of %q is not one of %s, %s, %s:N", name, path,
			TransformRelativeTime, TransformTruncateUUID, TransformTruncateText)
	}
	return t, nil
}

// truncateUUID is "..." and the last 8 characters of a value.
func truncateUUID(v any) string {
	s := fmt.Sprint(v)
	if len(s) <= 8 {
		return s
	}
	return "..." + s[len(s)-8:]
}

// apply rewrites, in data (decoded JSON), every value the path reaches,
// through arrays; a path the data lacks, and null values, are skipped.
func (t fieldTransform) apply(data any) error {
	return t.walk(data, t.path)
}

func (t fieldTransform) walk(v any, path []string) error {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if err := t.walk(e, path); err != nil {
				return err
			}
		}
	case map[string]any:
		child, ok := x[path[0]]
		if !ok {
			return nil
		}
		if len(path) > 1 {
			return t.walk(child, path[1:])
		}
		if arr, ok := child.([]any); ok { // a list of values: each one
			for i, e := range arr {
				if e == nil {
					continue
				}
				s, err := t.fn(e)
				if err != nil {
					return fmt.Errorf("transform %s of %s: %w", t.name, strings.Join(t.path, "."), err)
				}
				arr[i] = s
			}
			return nil
		}
		if child == nil {
			return nil
		}
		s, err := t.fn(child)
		if err != nil {
			return fmt.Errorf("transform %s of %s: %w", t.name, strings.Join(t.path, "."), err)
		}
		x[path[0]] = s
	}
	return nil
}

// Levels of a [TransformationLog].
const (
	LogInfo  = "info"
	LogWarn  = "warn"
	LogError = "error"
)

// TransformationLog is an entry of the transformation log: a format that failed (level "error",
// Error set) or ran slowly (level "warn", ProcessingTimeMs set).
//
// The zero value is an empty entry. TransformationLog is a plain value.
type TransformationLog struct {
	ID               string    `json:"id"` // a random UUID
	Timestamp        time.Time `json:"timestamp"`
	Level            string    `json:"level"`
	Operation        string    `json:"operation"`
	InputSize        int       `json:"inputSize"`
	Error            string    `json:"error,omitempty"`
	ProcessingTimeMs float64   `json:"processingTimeMs,omitempty"`
	UsedFallback     bool      `json:"usedFallback"`
}
