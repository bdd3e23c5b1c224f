// `ctxfit gateway` through the TypeScript MCP client
// (@modelcontextprotocol/sdk), which compiles every tool's outputSchema and
// validates every structuredContent against it (as Claude Desktop and MCP
// Inspector do): the gateway in front of examples/httpserver, built from
// the OpenAPI document the server serves at /openapi.json. Every operation
// must become a tool whose schemas the client accepts, valid calls must
// reach the API, invalid ones must come back as structured errors, and
// large results must be shaped within the hard cap with everything
// reachable.
//
// e2e/gateway_test.go runs this file with the path of the ctxfit binary in
// CTXFIT_E2E_CTXFIT and the document's URL in CTXFIT_E2E_OPENAPI_URL.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { rebuild } from './follow.mjs';

const env = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = env('CTXFIT_E2E_CTXFIT');
const openapi = env('CTXFIT_E2E_OPENAPI_URL');

const NEXT = 'ctxfit_next';
const OPERATIONS = ['listBookings', 'getBooking', 'getLog', 'health'];
const HARD_CAP = 3000;

async function connect(args) {
  const transport = new StdioClientTransport({
    command: ctxfit,
    args: ['gateway', '--openapi', openapi, ...args],
    env: {
      ...getDefaultEnvironment(),
      CTXFIT_SECRET: 'an end-to-end secret of 32 bytes or more',
      CTXFIT_SHAPE_TIMEOUT: '1m',
      CTXFIT_ADMISSION_WAIT: '1m',
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'ctxfit-e2e-gateway', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools(); // compiles every outputSchema
  return { client, tools, stderr: () => stderr };
}

function texts(res) {
  return res.content.filter((c) => !(c.type === 'resource_link' && c._meta?.['ctxfit/original'])).map((c) => {
    assert.equal(c.type, 'text');
    return c.text;
  });
}

describe('ctxfit gateway in front of examples/httpserver', () => {
  let s;
  before(async () => { s = await connect(['--threshold', '1000', '--hard-cap', String(HARD_CAP)]); });
  after(async () => { await s?.client.close(); });

  test('every operation is a tool with an object input schema, a description and annotations', () => {
    const names = s.tools.map((t) => t.name);
    for (const op of OPERATIONS) {
      assert.ok(names.includes(op), `${op} in ${names}`);
      const tool = s.tools.find((t) => t.name === op);
      assert.equal(tool.inputSchema.type, 'object');
      assert.ok(tool.description.length >= 10);
      assert.match(tool.description, /\(GET \//);
      assert.equal(tool.annotations.readOnlyHint, true);
    }
    const get = s.tools.find((t) => t.name === 'getBooking');
    assert.deepEqual(get.inputSchema.required, ['id']);
    assert.equal(get.inputSchema.properties.id.pattern, '^BK[0-9]{5}$');
    const health = s.tools.find((t) => t.name === 'health');
    assert.ok(health.outputSchema?.anyOf, 'the object response is an output schema, rewritten to accept shaped results');
  });

  test('every operation answers a valid call, and structured content validates', async () => {
    const calls = {
      listBookings: { status: 'pending', order: 'created_desc' },
      getBooking: { id: 'BK00042', fields: 'all' },
      getLog: { name: 'app' },
      health: {},
    };
    for (const [name, args] of Object.entries(calls)) {
      const res = await s.client.callTool({ name, arguments: args }); // throws if structuredContent fails validation
      assert.ok(!res.isError, `${name}: ${texts(res).join(' ')}`);
    }
    const health = await s.client.callTool({ name: 'health', arguments: {} });
    assert.deepEqual(health.structuredContent, { status: 'ok' });
  });

  test('a page of the API, shaped again by the gateway, is rebuilt whole by following ctxfit_next', async () => {
    const first = await s.client.callTool({ name: 'listBookings', arguments: {} });
    assert.ok(!first.isError);
    assert.equal(first._meta?.['ctxfit/strategy'], 'pagination');
    const page = JSON.parse(await rebuild(texts(first)[0], async (cursor, part) => {
      const res = await s.client.callTool({ name: NEXT, arguments: part ? { cursor, part } : { cursor } });
      assert.ok(!res.isError, texts(res).join(' '));
      assert.ok(res._meta?.['ctxfit/tokens'] <= HARD_CAP, 'within the hard cap');
      return texts(res)[0];
    }));
    assert.equal(page.items.length, page.meta.pageSize);
    assert.equal(page.items[0].id, 'BK00001');
    assert.ok(page.nextCursor, 'the API\'s own cursor leads to its next page');
    const second = await s.client.callTool({ name: 'listBookings', arguments: { cursor: page.nextCursor } });
    assert.ok(!second.isError, texts(second).join(' '));
  });

  test('invalid arguments are a structured tool error the model can retry from', async () => {
    const res = await s.client.callTool({ name: 'listBookings', arguments: { status: 'booked' } });
    assert.equal(res.isError, true);
    const e = res.structuredContent;
    assert.equal(e.code, 'parameter_invalid');
    assert.equal(e.data.parameter, 'status');
    assert.equal(e.data.value, '"booked"');
    assert.match(e.data.expected, /one of "confirmed"/);
    assert.ok(e.data.suggestion);
    assert.match(texts(res)[0], /Argument "status" \(got "booked"\)/);
  });

  test('an answer outside 2xx is a tool error with the status and an excerpt', async () => {
    const res = await s.client.callTool({ name: 'getBooking', arguments: { id: 'BK99999' } });
    assert.equal(res.isError, true);
    assert.match(texts(res)[0], /answered 404 Not Found: \{"error":"no booking \\"BK99999\\""/);
    assert.equal(res._meta['ctxfit/error'].data.status, 404);
  });
});
