// Package knowledgegraph holds ctxfit.yaml, a ready configuration of ctxfit
// for a Graphiti knowledge-graph MCP server behind ctxfit proxy: the seven
// compact formats of the MCP-wrapper data model (search nodes, search
// facts, episodes, status, add memory, delete, clear graph). Its tests run
// them on results shaped like the server's and its benchmark reports the
// savings of each:
//
//	go test -run '^$' -bench . ./examples/knowledgegraph/
package knowledgegraph
