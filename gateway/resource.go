package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addResource serves t's operation on s as a resource, or a resource
// template when its path has parameters, at the API's URL of the
// operation.
func (t *tool) addResource(s *mcp.Server) {
	uri := strings.TrimSuffix(t.base.String(), "/") + t.op.Path
	if len(templateNames(t.op.Path)) == 0 {
		s.AddResource(&mcp.Resource{URI: uri, Name: t.op.Tool.Name, Title: t.op.Tool.Title,
			Description: t.op.Tool.Description, MIMEType: "application/json"}, t.read)
		return
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: uri, Name: t.op.Tool.Name, Title: t.op.Tool.Title,
		Description: t.op.Tool.Description, MIMEType: "application/json"}, t.read)
}

// read answers a resources/read of t's operation: the URI's path values
// are its arguments, the call is the tool's, its answer the resource's
// contents; an API error is the read's error.
func (t *tool) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	args, err := t.pathArguments(uri)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := t.call(ctx, &mcp.CallToolRequest{Session: req.Session,
		Params: &mcp.CallToolParamsRaw{Name: t.op.Tool.Name, Arguments: raw}})
	if err != nil {
		return nil, err
	}
	var texts []string
	out := &mcp.ReadResourceResult{}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
			out.Contents = append(out.Contents, &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: c.Text})
		case *mcp.EmbeddedResource:
			rc := *c.Resource
			rc.URI = uri
			out.Contents = append(out.Contents, &rc)
		}
	}
	if res.IsError {
		return nil, fmt.Errorf("gateway: read %s: %s", uri, strings.Join(texts, " "))
	}
	if len(out.Contents) == 1 && !json.Valid([]byte(out.Contents[0].Text)) {
		out.Contents[0].MIMEType = "text/plain"
	}
	return out, nil
}

// pathArguments returns the arguments a URI of the operation's template
// fills: its path parameters, numbers where their schema wants one.
func (t *tool) pathArguments(uri string) (map[string]any, error) {
	base := strings.TrimSuffix(t.base.String(), "/")
	rest, ok := strings.CutPrefix(uri, base)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	names := templateNames(t.op.Path)
	pattern := regexp.QuoteMeta(t.op.Path)
	for _, name := range names {
		pattern = strings.Replace(pattern, regexp.QuoteMeta("{"+name+"}"), "([^/?#]+)", 1)
	}
	m := regexp.MustCompile("^" + pattern + "$").FindStringSubmatch(rest)
	if m == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	props, _ := t.op.input["properties"].(map[string]any)
	args := map[string]any{}
	for i, name := range names {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, fmt.Errorf("gateway: %s: the value of %s: %w", uri, name, err)
		}
		arg := name
		for _, p := range t.op.params {
			if p.in == "path" && p.name == name {
				arg = p.arg
			}
		}
		schema, _ := props[arg].(map[string]any)
		if typ, _ := schema["type"].(string); typ == "integer" || typ == "number" {
			args[arg] = json.Number(v)
		} else {
			args[arg] = v
		}
	}
	return args, nil
}
