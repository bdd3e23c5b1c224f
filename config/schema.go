package config

import (
	"bytes"
	_ "embed" // the schema
)

//go:generate go run ./internal/schemagen -src settings -o schema.json

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of the settings file, in
// JSON: every key with its type, limits and documentation, generated from
// [settings.Config] by go generate (config/schema.json). Editors use it for
// completion and checks, e.g. with a first line
// "# yaml-language-server: $schema=<path or URL of schema.json>" in a YAML
// file or "$schema" in VS Code's json.schemas setting. The files that
// [Load] accepts are those the schema accepts, except the rules between
// fields (hardCap >= threshold, pageSize <= maxPageSize), which only
// [settings.Config.Validate] checks. The slice is a copy.
func Schema() []byte { return bytes.Clone(schemaJSON) }
