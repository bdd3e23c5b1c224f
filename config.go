package ctxfit

import "github.com/ctxfit/ctxfit/config/settings"

// The settings types live in package config/settings, so that reading and
// watching settings (package config) does not import the engine; the names
// below are the same types.
type (
	// Config is the serializable part of the guard's settings: see
	// [settings.Config].
	Config = settings.Config
	// WrapperConfig sets how output formats are applied: see
	// [settings.WrapperConfig].
	WrapperConfig = settings.WrapperConfig
	// OutputFormat is an endpoint's compact rendering of its JSON
	// responses: see [settings.OutputFormat].
	OutputFormat = settings.OutputFormat
	// Params names the request parameters the guard reads: see
	// [settings.Params].
	Params = settings.Params
	// Endpoint overrides the settings for one route pattern or tool: see
	// [settings.Endpoint].
	Endpoint = settings.Endpoint
	// Duration is a time.Duration that reads and writes as a Go duration
	// string: see [settings.Duration].
	Duration = settings.Duration
)

// Defaults of the guard's settings (see [settings.Config]).
const (
	DefaultThreshold       = settings.DefaultThreshold
	DefaultHardCap         = settings.DefaultHardCap
	DefaultPageSize        = settings.DefaultPageSize
	DefaultMaxPageSize     = settings.DefaultMaxPageSize
	DefaultChunkTokens     = settings.DefaultChunkTokens
	DefaultCursorTTL       = settings.DefaultCursorTTL
	DefaultShapeTimeout    = settings.DefaultShapeTimeout
	DefaultMaxBufferBytes  = settings.DefaultMaxBufferBytes
	DefaultStoreMaxBytes   = settings.DefaultStoreMaxBytes
	DefaultStoreMaxItems   = settings.DefaultStoreMaxItems
	DefaultMaxShapingBytes = settings.DefaultMaxShapingBytes
	DefaultAdmissionWait   = settings.DefaultAdmissionWait
	// MinHardCap is the smallest hard cap a Config may set: a page with
	// its cursors and budget fields, and an error document, need room.
	MinHardCap = settings.MinHardCap
)

// Defaults of [WrapperConfig].
const (
	DefaultSlowThresholdMs = settings.DefaultSlowThresholdMs
	DefaultFormatTimeoutMs = settings.DefaultFormatTimeoutMs
)

// Formats of pages (Endpoint.Format, Request.Format).
const (
	// FormatJSON writes a page's items as the server wrote them.
	FormatJSON = settings.FormatJSON
	// FormatTOON writes a page of a list of uniform objects as TOON
	// (package toon): see [settings.FormatTOON].
	FormatTOON = settings.FormatTOON
)
