package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/mcpfit"
)

// graphServerEnv makes the test binary a knowledge-graph MCP server on
// stdio, in the shape of @modelcontextprotocol/server-memory's graph tools
// (read_graph, search_nodes, open_nodes answer {entities, relations} with
// an outputSchema): "raw" serves it as it is; "mcpfit" installs mcpfit on
// it with the settings file named by graphConfigEnv
// (examples/knowledgegraph/memory.yaml), read_graph with a threshold of
// graphSmallThreshold tokens (and chunks of as many) so that its rendering
// is over it.
const (
	graphServerEnv      = "E2E_GRAPH_SERVER"
	graphConfigEnv      = "E2E_GRAPH_CONFIG"
	graphLogEnv         = "E2E_GRAPH_LOG" // the transformation log of the mcpfit server; "" for none
	graphSmallThreshold = 300
)

type graphEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type graphRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

type graph struct {
	Entities  []graphEntity   `json:"entities"`
	Relations []graphRelation `json:"relations"`
}

type searchInput struct {
	Query string `json:"query,omitempty"`
}

type openInput struct {
	Names []string `json:"names"`
}

// theGraph is the graph formats.test.mjs builds in server-memory: 40
// engineers, each reporting to the one before.
func theGraph() graph {
	var g graph
	for i := range 40 {
		e := graphEntity{Name: fmt.Sprintf("Engineer %d", i), EntityType: "person", Observations: []string{
			fmt.Sprintf("Engineer %d works on the knowledge graph team in Berlin and reviews the ingestion pipeline.", i),
			fmt.Sprintf("Engineer %d joined in 2024 and leads the migration of the entity store to the new schema.", i),
			fmt.Sprintf("Engineer %d speaks at the weekly standup about the release plan and the open bugs.", i),
		}}
		g.Entities = append(g.Entities, e)
		if i > 0 {
			g.Relations = append(g.Relations, graphRelation{From: e.Name, To: fmt.Sprintf("Engineer %d", i-1), RelationType: "reports_to"})
		}
	}
	return g
}

// subgraph is the entities keep selects and the relations between them.
func (g graph) subgraph(keep func(graphEntity) bool) graph {
	out := graph{Entities: []graphEntity{}, Relations: []graphRelation{}}
	in := map[string]bool{}
	for _, e := range g.Entities {
		if keep(e) {
			out.Entities = append(out.Entities, e)
			in[e.Name] = true
		}
	}
	for _, r := range g.Relations {
		if in[r.From] && in[r.To] {
			out.Relations = append(out.Relations, r)
		}
	}
	return out
}

func runGraphServer() {
	g := theGraph()
	s := mcp.NewServer(&mcp.Implementation{Name: "graph", Version: "1"}, nil)
	answer := func(sub graph) (*mcp.CallToolResult, graph, error) { return nil, sub, nil }
	mcp.AddTool(s, &mcp.Tool{Name: "read_graph", Description: "Read the whole knowledge graph."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, graph, error) {
			return answer(g)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "search_nodes", Description: "Find the entities whose name, type or observations hold the query."},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, graph, error) {
			return answer(g.subgraph(func(e graphEntity) bool {
				return strings.Contains(e.Name, in.Query) || strings.Contains(e.EntityType, in.Query) ||
					strings.Contains(strings.Join(e.Observations, "\n"), in.Query)
			}))
		})
	mcp.AddTool(s, &mcp.Tool{Name: "open_nodes", Description: "Open the named entities."},
		func(_ context.Context, _ *mcp.CallToolRequest, in openInput) (*mcp.CallToolResult, graph, error) {
			return answer(g.subgraph(func(e graphEntity) bool {
				for _, n := range in.Names {
					if n == e.Name {
						return true
					}
				}
				return false
			}))
		})
	if os.Getenv(graphServerEnv) == "mcpfit" {
		cfg, err := config.LoadFile(os.Getenv(graphConfigEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cfg.Secret = "an end-to-end secret of 32 bytes or more"
		cfg.Wrapper.LogFile = os.Getenv(graphLogEnv)
		for i := range cfg.Endpoints {
			if cfg.Endpoints[i].Match == "read_graph" {
				cfg.Endpoints[i].Threshold, cfg.Endpoints[i].ChunkTokens = graphSmallThreshold, graphSmallThreshold
			}
		}
		guard, err := ctxfit.New(&ctxfit.Options{Config: cfg})
		if err == nil {
			err = mcpfit.Install(s, guard, nil)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// graphServerConfig is the settings file the mcpfit graph server reads.
func graphServerConfig() (string, error) {
	return filepath.Abs(filepath.Join("..", "examples", "knowledgegraph", "memory.yaml"))
}
