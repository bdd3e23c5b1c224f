package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// maxRefFiles bounds the external documents one document may reference.
const maxRefFiles = 1000

// Document is a parsed OpenAPI document and where it came from. The zero
// Document has no document; make one with [Parse] or [Load]. [New] only
// reads it, so one Document may serve several gateways.
//
// A Document holds the document as decoded JSON: reading a large one
// (GitHub's, Stripe's) costs no more than decoding it, and the schemas of
// an operation are converted when [Operations] or [New] need them.
type Document struct {
	// OpenAPI is the version the document declares: "3.0.3", "3.1.0", or
	// "2.0" for a Swagger 2.0 document, which was converted to OpenAPI 3.0.
	OpenAPI string
	// Title and Version are the document's info.title and info.version.
	Title, Version string
	// Location is the URL the document was fetched from, or nil for a
	// file or bytes; a relative server URL is resolved against it.
	Location *url.URL
	// Warnings are what was wrong with the document but did not stop it
	// from loading (an external reference that was not allowed or could
	// not be read, say); [New] logs them.
	Warnings []string

	raw map[string]any // the document, external references inlined
}

// LoadOptions configure [Load]. A nil *LoadOptions, like the zero value,
// means the defaults.
type LoadOptions struct {
	// Client fetches the document and its external references by URL.
	// Nil means http.DefaultClient.
	Client *http.Client
	// AllowRefs are the URL prefixes (or directories) of external
	// references allowed besides those beside the document: files in the
	// document's directory or below it, and URLs under the document's own
	// origin and directory. Empty means those only.
	AllowRefs []string
}

// Parse parses an OpenAPI 3.0 or 3.1 document, or a Swagger 2.0 one which
// it converts to OpenAPI 3.0, in JSON or YAML. External references cannot
// be resolved without the document's location ([Load] resolves them): each
// is a warning, and the operations that need one are skipped by [New].
func Parse(ctx context.Context, data []byte) (*Document, error) {
	return parse(ctx, data, nil)
}

func parse(ctx context.Context, data []byte, r *refReader) (*Document, error) {
	v, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("gateway: parse the OpenAPI document: %w", err)
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("gateway: parse the OpenAPI document: it is not a JSON or YAML object")
	}
	d := &Document{}
	if s, _ := raw["swagger"].(string); s != "" {
		if !strings.HasPrefix(s, "2.") {
			return nil, fmt.Errorf("gateway: Swagger version %q: want 2.0, or an OpenAPI 3.0 or 3.1 document", s)
		}
		d.OpenAPI = s
		if r != nil {
			raw = r.bundle(raw, &d.Warnings)
		}
		if raw, err = convertSwagger(raw); err != nil {
			return nil, err
		}
	} else {
		d.OpenAPI, _ = raw["openapi"].(string)
		if !strings.HasPrefix(d.OpenAPI, "3.") {
			return nil, fmt.Errorf("gateway: OpenAPI version %q: want 3.0 or 3.1 (or a Swagger 2.0 document)", d.OpenAPI)
		}
		if r != nil {
			raw = r.bundle(raw, &d.Warnings)
		}
	}
	if _, ok := raw["paths"].(map[string]any); !ok {
		return nil, errors.New("gateway: invalid OpenAPI document: it has no paths")
	}
	if r == nil {
		walkRefs(raw, func(ref string) {
			if !strings.HasPrefix(ref, "#") {
				d.Warnings = append(d.Warnings, fmt.Sprintf("external reference %q not resolved: load the document from its file or URL", ref))
			}
		})
	}
	if info, ok := raw["info"].(map[string]any); ok {
		d.Title, _ = info["title"].(string)
		d.Version, _ = info["version"].(string)
	}
	d.raw = raw
	return d, ctx.Err()
}

// decode decodes JSON, or YAML into the values JSON would give.
func decode(data []byte) (any, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var v any
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&v); err == nil {
			return v, nil
		}
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return jsonValue(v)
}

// jsonValue turns YAML's values into JSON's: maps of string keys, numbers
// as json.Number.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[k] = j
		}
		return x, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = j
		}
		return m, nil
	case []any:
		for i := range x {
			j, err := jsonValue(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = j
		}
		return x, nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
	case string, bool, nil, json.Number:
		return x, nil
	default:
		return fmt.Sprint(x), nil // timestamps and the like
	}
}

// Load reads the document at location, an http:// or https:// URL (fetched
// within [DefaultLoadTimeout] unless ctx ends sooner) or a file path, and
// parses it as [Parse] does, with its external references ($ref to another
// file or URL) inlined: those beside the document (files in its directory
// or below, URLs under its origin and directory) and those under one of
// [LoadOptions.AllowRefs]. Another reference, or one that cannot be read,
// is a warning ([Document.Warnings]); the operations that need it are
// skipped.
func Load(ctx context.Context, location string, opts *LoadOptions) (*Document, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultLoadTimeout)
	defer cancel()
	r := &refReader{ctx: ctx, client: o.Client, docs: map[string]any{}}
	var loc *url.URL
	if u, err := url.Parse(location); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		loc = u
	} else {
		abs, err := filepath.Abs(location)
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		loc = &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	}
	r.base = loc
	r.allow = append(r.allow, realDir(dir(loc)))
	for _, a := range o.AllowRefs {
		if u, err := url.Parse(a); err == nil && u.Scheme != "" && u.Scheme != "file" {
			r.allow = append(r.allow, u)
			continue
		}
		abs, err := filepath.Abs(strings.TrimPrefix(a, "file://"))
		if err != nil {
			return nil, fmt.Errorf("gateway: --allow-ref %q: %w", a, err)
		}
		r.allow = append(r.allow, realDir(&url.URL{Scheme: "file", Path: strings.TrimSuffix(filepath.ToSlash(abs), "/") + "/"}))
	}
	data, err := r.read(loc)
	if err != nil {
		if loc.Scheme == "file" {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		return nil, fmt.Errorf("gateway: fetch the OpenAPI document: %w", err)
	}
	d, err := parse(ctx, data, r)
	if err != nil {
		return nil, err
	}
	if loc.Scheme != "file" {
		d.Location = loc
	}
	return d, nil
}

// dir returns the directory of u, with its trailing slash.
func dir(u *url.URL) *url.URL {
	d := *u
	d.RawQuery, d.Fragment = "", ""
	if i := strings.LastIndex(d.Path, "/"); i >= 0 {
		d.Path = d.Path[:i+1]
	}
	d.RawPath = ""
	return &d
}

// refReader reads and inlines a document's external references.
type refReader struct {
	ctx    context.Context
	client *http.Client
	base   *url.URL
	allow  []*url.URL     // prefixes a reference's URL must be under
	docs   map[string]any // decoded documents by URL (without fragment)
	total  int64          // bytes read, bounded by maxDocument
}

// read reads the document at u: a file or an http(s) URL.
func (r *refReader) read(u *url.URL) ([]byte, error) {
	var data []byte
	if u.Scheme == "file" {
		f, err := os.Open(filepath.FromSlash(u.Path))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, maxDocument-r.total+1))
		if err != nil {
			return nil, err
		}
	} else {
		req, err := http.NewRequestWithContext(r.ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
		resp, err := r.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s answered %s", u.Redacted(), resp.Status)
		}
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxDocument-r.total+1))
		if err != nil {
			return nil, err
		}
	}
	r.total += int64(len(data))
	if r.total > maxDocument {
		return nil, fmt.Errorf("the OpenAPI document and its references are larger than %d MiB", maxDocument>>20)
	}
	return data, nil
}

// realDir returns the directory d (a file URL with its trailing slash)
// with its symbolic links resolved, so that [refReader.allowed] compares
// real paths; d itself when it cannot be resolved (it does not exist).
// Another scheme's d is returned as it is.
func realDir(d *url.URL) *url.URL {
	if d.Scheme != "file" {
		return d
	}
	p, err := filepath.EvalSymlinks(filepath.FromSlash(d.Path))
	if err != nil {
		return d
	}
	return &url.URL{Scheme: "file", Path: strings.TrimSuffix(filepath.ToSlash(p), "/") + "/"}
}

// allowed reports whether a reference may be read from u. A file's
// symbolic links are resolved first, so that a link beside the document
// that points outside it is not read; a file that does not exist is
// judged by its path (reading it fails anyway).
func (r *refReader) allowed(u *url.URL) bool {
	if u.Scheme == "file" {
		if p, err := filepath.EvalSymlinks(filepath.FromSlash(u.Path)); err == nil {
			real := *u
			real.Path = filepath.ToSlash(p)
			u = &real
		}
	}
	for _, a := range r.allow {
		if u.Scheme == a.Scheme && u.Host == a.Host && strings.HasPrefix(u.Path, a.Path) && !strings.Contains(u.Path, "/../") {
			return true
		}
	}
	return false
}

// bundle returns raw with its external references replaced by what they
// point to, recursively; a recursive external reference becomes {} (any
// value), and a reference that is not allowed or cannot be read stays, with
// a warning.
func (r *refReader) bundle(raw map[string]any, warnings *[]string) map[string]any {
	key := *r.base
	key.Fragment = ""
	r.docs[key.String()] = raw
	out, _ := r.inline(raw, r.base, nil, warnings).(map[string]any)
	return out
}

func (r *refReader) inline(v any, base *url.URL, stack []string, warnings *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && (!strings.HasPrefix(ref, "#") || base != r.base) {
			return r.follow(x, ref, base, stack, warnings)
		}
		for k, e := range x {
			x[k] = r.inline(e, base, stack, warnings)
		}
		return x
	case []any:
		for i := range x {
			x[i] = r.inline(x[i], base, stack, warnings)
		}
		return x
	}
	return v
}

// follow returns what the reference ref (of the map m, in the document at
// base) points to, inlined.
func (r *refReader) follow(m map[string]any, ref string, base *url.URL, stack []string, warnings *[]string) any {
	u, err := base.Parse(ref)
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("reference %q: %v", ref, err))
		return m
	}
	if !r.allowed(u) {
		*warnings = append(*warnings, fmt.Sprintf("reference %q not allowed: only files beside the document and URLs under its origin are read unless --allow-ref names their prefix", ref))
		return m
	}
	full := u.String()
	for _, s := range stack {
		if s == full {
			return map[string]any{} // recursive: any value
		}
	}
	if len(stack) >= maxSchemaDepth*4 || len(r.docs) > maxRefFiles {
		return map[string]any{}
	}
	file := *u
	file.Fragment = ""
	doc, ok := r.docs[file.String()]
	if !ok {
		data, err := r.read(&file)
		if err == nil {
			doc, err = decode(data)
		}
		if err != nil {
			*warnings = append(*warnings, fmt.Sprintf("reference %q: %v", ref, err))
			r.docs[file.String()] = nil
			return m
		}
		r.docs[file.String()] = doc
	}
	if doc == nil {
		return m
	}
	target, ok := pointer(doc, u.Fragment)
	if !ok {
		*warnings = append(*warnings, fmt.Sprintf("reference %q: no such value", ref))
		return m
	}
	if file.String() == r.docKey() && u.Fragment != "" {
		// Back into the main document: keep it a local reference.
		out := map[string]any{"$ref": "#" + (&url.URL{Fragment: u.Fragment}).EscapedFragment()}
		for k, e := range m {
			if k != "$ref" {
				out[k] = e
			}
		}
		return out
	}
	copied := r.inline(deepCopy(target), &file, append(stack, full), warnings)
	if cm, ok := copied.(map[string]any); ok && len(m) > 1 {
		for k, e := range m {
			if k != "$ref" {
				cm[k] = e
			}
		}
	}
	return copied
}

func (r *refReader) docKey() string {
	k := *r.base
	k.Fragment = ""
	return k.String()
}

// pointer returns the value at the JSON pointer p (a URL fragment,
// "/components/schemas/Pet") within doc.
func pointer(doc any, p string) (any, bool) {
	if p == "" {
		return doc, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	v := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// deepCopy copies the maps and slices of a decoded JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// walkRefs calls f with every $ref of v.
func walkRefs(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			f(ref)
		}
		for _, e := range x {
			walkRefs(e, f)
		}
	case []any:
		for _, e := range x {
			walkRefs(e, f)
		}
	}
}
