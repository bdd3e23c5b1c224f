// Package e2e holds ctxfit's end-to-end tests: the ctxfit binary, the
// example servers and a TypeScript client (e2e/ts), each a real process
// talking MCP over stdio or streamable HTTP. It has no API.
package e2e
