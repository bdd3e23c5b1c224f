// Command schemagen writes config/schema.json, the JSON Schema of ctxfit's
// settings file, from the Go types that read it: settings.Config, Params and
// Endpoint in config/settings/settings.go. Field names come from the json
// tags, types from the Go types, limits from the validate tags (gte, lte,
// oneof, min, required, dive) and descriptions from the fields' doc
// comments, so that editors offer completion and documentation.
//
// It runs with go generate in package config:
//
//	//go:generate go run ./internal/schemagen -src settings -o schema.json
//
// TestSchemaIsUpToDate fails when the committed file is stale.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxfit/ctxfit/config/settings"
)

func main() {
	src := flag.String("src", "settings", "the directory of settings.go, the settings types")
	out := flag.String("o", "schema.json", "the file to write")
	flag.Parse()
	b, err := generate(*src)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

// schema is the subset of JSON Schema 2020-12 the settings need.
type schema struct {
	Schema               string             `json:"$schema,omitempty"`
	ID                   string             `json:"$id,omitempty"`
	Ref                  string             `json:"$ref,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"` // false, or the schema of a map's values
	Items                *schema            `json:"items,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	AnyOf                []*schema          `json:"anyOf,omitempty"`
	Defs                 map[string]*schema `json:"$defs,omitempty"`
}

// durationPattern matches what time.ParseDuration reads.
const durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

var durationType = reflect.TypeFor[settings.Duration]()

// generate returns the schema, indented, with a final newline.
func generate(srcDir string) ([]byte, error) {
	docs, err := fieldDocs(filepath.Join(srcDir, "settings.go"))
	if err != nil {
		return nil, err
	}
	g := &generator{docs: docs, defs: map[string]*schema{}}
	root := g.object(reflect.TypeFor[settings.Config]())
	root.Schema = "https://json-schema.org/draft/2020-12/schema"
	root.ID = "https://raw.githubusercontent.com/ctxfit/ctxfit/main/config/schema.json"
	root.Title = "ctxfit settings"
	root.Description = "The settings file of ctxfit (JSON or YAML), read by config.Load and config.Watch. " +
		"Every key is optional; an absent key or a zero value means its default. CTXFIT_* environment variables override the file. " +
		"Generated from ctxfit.Config by config/internal/schemagen: do not edit."
	root.Defs = g.defs
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

type generator struct {
	docs map[string]map[string]string // type → field → doc
	defs map[string]*schema
}

// object returns the schema of a struct type: strict, as the file decoder is.
func (g *generator) object(t reflect.Type) *schema {
	s := &schema{Type: "object", Properties: map[string]*schema{}, AdditionalProperties: new(bool)}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := g.field(f.Type)
		rules := strings.Split(f.Tag.Get("validate"), ",")
		if len(rules) > 0 && rules[0] == "dive" && p.Items != nil {
			applyRules(p.Items, rules[1:])
		} else {
			applyRules(p, rules)
		}
		if hasRule(rules, "required") {
			s.Required = append(s.Required, name)
		}
		p.Description = g.doc(t.Name(), f.Name)
		if p.Ref != "" && p.Description != "" {
			p = &schema{AnyOf: []*schema{{Ref: p.Ref}}, Description: p.Description}
		}
		s.Properties[name] = p
	}
	return s
}

// doc returns a field's doc comment as plain text; an undocumented field of
// Endpoint takes the doc of the Config field of the same name (it
// overrides it).
func (g *generator) doc(typ, field string) string {
	if d := g.docs[typ][field]; d != "" {
		return d
	}
	if typ == "Endpoint" && g.docs["Config"][field] != "" {
		return "Overrides the top-level " + jsonName(field) + " for this endpoint; zero inherits it."
	}
	return ""
}

// jsonName is a field's name in files: "HardCap" → "hardCap".
func jsonName(field string) string { return strings.ToLower(field[:1]) + field[1:] }

func (g *generator) field(t reflect.Type) *schema {
	switch {
	case t == durationType:
		return &schema{AnyOf: []*schema{
			{Type: "string", Pattern: durationPattern},
			{Type: "number", Minimum: ptr(0.0)},
		}}
	case t.Kind() == reflect.Pointer:
		return g.field(t.Elem())
	case t.Kind() == reflect.Struct:
		if _, ok := g.defs[t.Name()]; !ok {
			g.defs[t.Name()] = nil // guards recursion
			g.defs[t.Name()] = g.object(t)
		}
		return &schema{Ref: "#/$defs/" + t.Name()}
	case t.Kind() == reflect.Slice:
		return &schema{Type: "array", Items: g.field(t.Elem())}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		return &schema{Type: "object", AdditionalProperties: g.field(t.Elem())}
	case t.Kind() == reflect.String:
		return &schema{Type: "string"}
	case t.Kind() == reflect.Bool:
		return &schema{Type: "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return &schema{Type: "integer"}
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		return &schema{Type: "number"}
	}
	panic("schemagen: no schema for " + t.String())
}

// applyRules turns validator rules into schema keywords.
func applyRules(s *schema, rules []string) {
	for _, r := range rules {
		name, param, _ := strings.Cut(r, "=")
		switch name {
		case "gte", "lte":
			x, err := strconv.ParseFloat(param, 64)
			if err != nil {
				panic("schemagen: rule " + r)
			}
			target := s
			if len(s.AnyOf) > 0 { // a duration: the bound is on the number
				target = s.AnyOf[1]
			}
			if name == "gte" {
				target.Minimum = &x
			} else {
				target.Maximum = &x
			}
		case "oneof":
			s.Enum = strings.Fields(param)
		case "min":
			n, err := strconv.Atoi(param)
			if err != nil {
				panic("schemagen: rule " + r)
			}
			if s.Type == "array" {
				s.MinItems = &n
			} else {
				s.MinLength = &n
			}
		}
	}
}

func hasRule(rules []string, name string) bool {
	for _, r := range rules {
		if r == name {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// fieldDocs parses the Go file at path and returns the doc comment of every
// field of its struct types, as plain text on one line. A comment that names
// the undocumented fields after it ("StoreMaxBytes and StoreMaxItems bound
// ...") documents them too.
func fieldDocs(path string) (map[string]map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	docs := map[string]map[string]string{}
	var p comment.Parser
	var pr comment.Printer
	pr.TextWidth = -1
	space := regexp.MustCompile(`\s+`)
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		m := map[string]string{}
		last := ""
		for _, fld := range st.Fields.List {
			if fld.Doc != nil {
				last = strings.TrimSpace(space.ReplaceAllString(string(pr.Text(p.Parse(fld.Doc.Text()))), " "))
			}
			for _, name := range fld.Names {
				if fld.Doc != nil || strings.Contains(last, name.Name) {
					m[name.Name] = last
				}
			}
		}
		docs[ts.Name.Name] = m
		return false
	})
	return docs, nil
}
