// A small MCP server with an MCP App page, for strict.test.mjs: the
// resource ui://viewer/app.html (text/html;profile=mcp-app, about 4 MB, as
// server-pdf's viewer is), which a host renders and a model does not read,
// and a tool that names it.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const page = '<!doctype html><html><body><script>' +
  'const viewer = "the viewer of the app";\n'.repeat(90000) + '</script></body></html>';

const server = new McpServer({ name: 'ctxfit-e2e-ui', version: '1.0.0' });
server.registerResource('viewer', 'ui://viewer/app.html', { mimeType: 'text/html;profile=mcp-app' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/html;profile=mcp-app', text: page }] }));
server.registerTool('show', { description: 'Show the viewer.', _meta: { ui: { resourceUri: 'ui://viewer/app.html' } } },
  async () => ({ content: [{ type: 'text', text: 'Shown.' }] }));
await server.connect(new StdioServerTransport());
