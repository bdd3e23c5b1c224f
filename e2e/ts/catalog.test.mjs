// `ctxfit gateway` in front of a large generated API, through the
// TypeScript MCP client (@modelcontextprotocol/sdk), which validates every
// tool list and result it gets: the tool list over --catalog-budget is a
// budgeted catalog the client accepts, a tool found with ctxfit_find_tools
// is called with ctxfit_call_tool and reaches the API, the client is told
// the list changed and then lists the found tool, and a trimmed
// definition's ctxfit://r/ link reads the whole definition back.
//
// e2e/catalog_test.go runs this file with the path of the ctxfit binary in
// CTXFIT_E2E_CTXFIT.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const ctxfit = process.env.CTXFIT_E2E_CTXFIT ?? '';
if (ctxfit === '') throw new Error('CTXFIT_E2E_CTXFIT is not set: run these tests through go test ./e2e/');

const BUDGET = 6000;
const KINDS = ['widgets', 'gadgets', 'orders', 'invoices', 'teams'];

// document is an OpenAPI document of n resources with a get, an update and
// a delete each (get_widget_0, ...), and one operation whose definition is
// about 20,000 tokens (update_repository_settings).
function document(n, base) {
  const paths = {};
  const ok = { 200: { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } } };
  for (let i = 0; i < n; i++) {
    const kind = KINDS[i % KINDS.length];
    const one = kind.slice(0, -1);
    const parameters = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];
    const op = (verb) => ({
      operationId: `${verb}_${one}_${i}`, tags: [kind], summary: `${verb} ${one} ${i}`,
      description: `${verb} the ${one} number ${i} of the account, with every field it has.`, parameters, responses: ok,
    });
    paths[`/${kind}/${i}/{id}`] = { get: op('get'), delete: op('delete') };
  }
  const props = {};
  for (let i = 0; i < 60; i++) {
    const nested = {};
    for (let j = 0; j < 10; j++) nested[`field_${j}`] = { type: 'string', description: `Nested field ${j} of property ${i}. `.repeat(4) };
    props[`prop_${i}`] = { type: 'object', description: `Property ${i}`, properties: nested };
  }
  paths['/repository/settings'] = { patch: {
    operationId: 'update_repository_settings', summary: 'Update the repository settings',
    description: 'Every setting of the repository can be changed here. '.repeat(100), responses: ok,
    requestBody: { content: { 'application/json': { schema: { type: 'object', properties: props } } } },
  } };
  return { openapi: '3.0.3', info: { title: 'generated', version: '1' }, servers: [{ url: base }], paths };
}

describe('ctxfit gateway in front of a large generated API', () => {
  let api, dir, client, listChanged;
  before(async () => {
    api = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ method: req.method, path: req.url }));
    });
    await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'ctxfit-catalog-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document(300, `http://127.0.0.1:${api.address().port}`)));
    const transport = new StdioClientTransport({
      command: ctxfit,
      args: ['gateway', '--openapi', file, '--catalog-budget', String(BUDGET)],
      env: { ...getDefaultEnvironment(), CTXFIT_SECRET: 'an end-to-end secret of 32 bytes or more', CTXFIT_SHAPE_TIMEOUT: '1m' },
      stderr: 'inherit',
    });
    client = new Client({ name: 'ctxfit-e2e-catalog', version: '1.0.0' });
    listChanged = new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, resolve));
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('tools/list is a budgeted catalog the client accepts', async () => {
    const { tools, nextCursor } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const own of ['ctxfit_next', 'ctxfit_details', 'ctxfit_search', 'ctxfit_query', 'ctxfit_find_tools', 'ctxfit_call_tool']) {
      assert.ok(names.includes(own), `${own} in ${names}`);
    }
    assert.equal(nextCursor, undefined);
    assert.ok(tools.length < 150, `${tools.length} of 601 tools listed`);
    // A token is at least one byte: the list is within the budget's bytes
    // several times over only if it is small.
    assert.ok(JSON.stringify({ tools }).length < BUDGET * 8);
  });

  test('a tool found with ctxfit_find_tools is called with ctxfit_call_tool, then by name', async () => {
    const found = await client.callTool({ name: 'ctxfit_find_tools', arguments: { query: 'delete order 172', limit: 3 } });
    assert.ok(!found.isError, JSON.stringify(found));
    const body = JSON.parse(found.content[0].text);
    assert.equal(body.tools[0].name, 'delete_order_172');

    const res = await client.callTool({ name: 'ctxfit_call_tool', arguments: { name: 'delete_order_172', arguments: { id: 'o-1' } } });
    assert.ok(!res.isError, JSON.stringify(res));
    assert.ok(res.content[0].text.includes('/orders/172/o-1'), res.content[0].text);

    await listChanged;
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'delete_order_172'), 'the found tool is listed');
    const direct = await client.callTool({ name: 'delete_order_172', arguments: { id: 'o-2' } });
    assert.ok(direct.content[0].text.includes('/orders/172/o-2'), direct.content[0].text);
  });

  test("a trimmed definition's link reads the whole definition", async () => {
    const found = await client.callTool({ name: 'ctxfit_find_tools', arguments: { query: 'update_repository_settings', limit: 1 } });
    const def = JSON.parse(found.content[0].text).tools[0];
    assert.equal(def.name, 'update_repository_settings');
    let uri = def._meta['dev.ctxfit/definition'];
    assert.ok(uri?.startsWith('ctxfit://r/'), JSON.stringify(def._meta));
    let whole = '';
    for (let i = 0; uri; i++) {
      assert.ok(i < 100);
      const r = await client.readResource({ uri });
      whole += r.contents[0].text;
      uri = r._meta?.['dev.ctxfit/nextRange'];
    }
    const original = JSON.parse(whole);
    assert.equal(original.name, 'update_repository_settings');
    assert.equal(Object.keys(original.inputSchema.properties.body.properties).length, 60, 'with its whole schema');
  });
});
