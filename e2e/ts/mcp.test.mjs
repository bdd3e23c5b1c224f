// ctxfit through the TypeScript MCP client (@modelcontextprotocol/sdk),
// which validates every structuredContent against the tool's outputSchema
// (as Claude Desktop and MCP Inspector do): shaped results must pass that
// validation, through the guarded example server and through `ctxfit proxy`
// in front of the unguarded (-raw) examples, and following every cursor
// must give back the whole result.
//
// e2e/ts_test.go runs this file with the paths of the binaries in
// CTXFIT_E2E_CTXFIT, CTXFIT_E2E_MCPSERVER, CTXFIT_E2E_MCPGOSERVER (may be
// empty) and CTXFIT_E2E_PROXY_CONFIG.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { body, rebuild } from './follow.mjs';

const env = (name, required = true) => {
  const v = process.env[name] ?? '';
  if (required && v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = env('CTXFIT_E2E_CTXFIT');
const mcpserver = env('CTXFIT_E2E_MCPSERVER');
const mcpgoserver = env('CTXFIT_E2E_MCPGOSERVER', false);
const proxyConfig = env('CTXFIT_E2E_PROXY_CONFIG');

const NEXT = 'ctxfit_next';
const DETAILS = 'ctxfit_details';
const META_NEXT = 'dev.ctxfit/nextCursor';
const META_STRATEGY = 'dev.ctxfit/strategy';

// connect starts a stdio server and returns a connected client whose tool
// validators are cached (callTool validates only tools it has listed).
async function connect(command, args) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...getDefaultEnvironment(), CTXFIT_SECRET: 'an end-to-end secret of 32 bytes or more' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; }); // drain it, keep it for failures
  const client = new Client({ name: 'ctxfit-e2e-ts', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, tools, stderr: () => stderr };
}

// texts returns a result's text blocks, which must be all it holds but
// for the resource_link to the original that a shaped result carries.
function texts(res) {
  return res.content.filter((c) => !(c.type === 'resource_link' && c._meta?.['dev.ctxfit/original'])).map((c) => {
    assert.equal(c.type, 'text');
    return c.text;
  });
}

// follow calls tool, then ctxfit_next until nextCursor is gone, and returns
// every result; callTool throws if a structuredContent fails validation.
async function follow(client, name, args) {
  const results = [];
  let res = await client.callTool({ name, arguments: args });
  for (let i = 0; i < 2000; i++) {
    assert.ok(!res.isError, `${name}: ${texts(res).join(' ')}`);
    results.push(res);
    const next = res._meta?.[META_NEXT];
    if (!next) return results;
    res = await client.callTool({ name: NEXT, arguments: { cursor: next } });
  }
  throw new Error('too many continuations');
}

const items = (results, key, fromStructured = false) =>
  results.flatMap((r) => (fromStructured ? r.structuredContent : JSON.parse(texts(r)[0]))[key]);

// whole follows every cursor and part of a shaped result with ctxfit_next
// and returns the original text, character for character.
async function whole(client, first) {
  return rebuild(body(first), async (cursor, part) => {
    const args = part ? { cursor, part } : { cursor };
    const res = await client.callTool({ name: NEXT, arguments: args });
    assert.ok(!res.isError, texts(res).join(' '));
    return body(res);
  });
}

// The unguarded example is the reference: what the tools really return.
let reference;
before(async () => { reference = await connect(mcpserver, ['-raw']); });
after(async () => { await reference?.client.close(); });

const targets = [
  { name: 'the guarded example (examples/mcpserver)', command: mcpserver, args: [], sameAsReference: true },
  { name: 'ctxfit proxy in front of examples/mcpserver -raw', command: ctxfit, args: ['proxy', '--config', proxyConfig, '--', mcpserver, '-raw'], sameAsReference: true },
];
if (mcpgoserver) {
  targets.push({ name: 'ctxfit proxy in front of examples/mcpgoserver -raw', command: ctxfit, args: ['proxy', '--config', proxyConfig, '--', mcpgoserver, '-raw'] });
}

for (const target of targets) {
  describe(`shaped: ${target.name}`, () => {
    let s;
    before(async () => { s = await connect(target.command, target.args); });
    after(async () => { await s?.client.close(); });

    test('lists the tools, ctxfit_next and ctxfit_details, with the rewritten output schema', () => {
      const names = s.tools.map((t) => t.name);
      for (const want of ['list_bookings', 'get_booking', 'read_log', 'search_bookings', NEXT, DETAILS]) {
        assert.ok(names.includes(want), `${want} in ${names}`);
      }
      const search = s.tools.find((t) => t.name === 'search_bookings');
      assert.ok(search.outputSchema, 'search_bookings keeps an output schema');
      assert.ok(search.outputSchema.anyOf, 'which also accepts the shaped envelopes');
    });

    test('search_bookings: every page validates and the pages are the whole result', async () => {
      const results = await follow(s.client, 'search_bookings', { query: '' });
      assert.ok(results.length > 1, 'the result is paged');
      assert.ok(results[0].structuredContent, 'the first page, the tool\'s result, has structured content');
      const want = texts(await reference.client.callTool({ name: 'search_bookings', arguments: { query: '' } }))[0];
      const got = await whole(s.client, results[0]);
      // The reference is examples/mcpserver; mcpgoserver writes its
      // objects' keys in another order.
      if (target.sameAsReference) assert.equal(got, want, 'character for character');
      else assert.deepEqual(JSON.parse(got), JSON.parse(want));
    });

    test('search_bookings with a small limit passes through unshaped and validates', async () => {
      const res = await s.client.callTool({ name: 'search_bookings', arguments: { query: 'BK0000', limit: 3 } });
      assert.ok(!res.isError);
      assert.equal(res._meta?.[META_STRATEGY], undefined);
      assert.equal(res.structuredContent.results.length, 3);
    });

    test('list_bookings: following ctxfit_next to the end gives every booking', async () => {
      for (const args of [{}, { status: 'pending' }]) {
        const results = await follow(s.client, 'list_bookings', args);
        assert.ok(results.length > 1);
        const want = JSON.parse(texts(await reference.client.callTool({ name: 'list_bookings', arguments: args }))[0]);
        assert.deepEqual(items(results, 'items'), want);
      }
    });

    test('read_log: the chunks are the log', async () => {
      const results = await follow(s.client, 'read_log', {});
      const got = results.map((r) => { assert.ok(r.content[0]._meta?.['dev.ctxfit/chunk'], 'a chunk travels as text'); return r.content[0].text; }).join('');
      const want = texts(await reference.client.callTool({ name: 'read_log', arguments: {} }))[0];
      assert.equal(got, want);
    });

    test('get_booking: a summary, and ctxfit_details returns all of it', async () => {
      const res = await s.client.callTool({ name: 'get_booking', arguments: { id: 'BK00007' } });
      assert.equal(res._meta?.[META_STRATEGY], 'summary');
      const full = await s.client.callTool({ name: DETAILS, arguments: { cursor: res._meta['dev.ctxfit/detailsCursor'], fields: 'all' } });
      assert.ok(!full.isError, texts(full).join(' '));
      const want = texts(await reference.client.callTool({ name: 'get_booking', arguments: { id: 'BK00007' } }))[0];
      assert.deepEqual(JSON.parse(texts(full)[0]), JSON.parse(want));
    });

    test('a tampered cursor is a tool error the client accepts', async () => {
      const res = await s.client.callTool({ name: NEXT, arguments: { cursor: 'not-a-cursor' } });
      assert.ok(res.isError);
      assert.match(texts(res)[0], /cursor/);
    });
  });
}

const unshaped = [{ name: 'examples/mcpserver -raw', command: mcpserver }];
if (mcpgoserver) unshaped.push({ name: 'examples/mcpgoserver -raw', command: mcpgoserver });

for (const target of unshaped) {
  describe(`unshaped: ${target.name}`, () => {
    let s;
    before(async () => { s = await connect(target.command, ['-raw']); });
    after(async () => { await s?.client.close(); });

    test('every tool answers whole, and search_bookings validates against its own schema', async () => {
      const names = s.tools.map((t) => t.name);
      assert.ok(!names.includes(NEXT));
      const search = await s.client.callTool({ name: 'search_bookings', arguments: { query: '' } });
      assert.ok(search.structuredContent.results.length > 100);
      const list = JSON.parse(texts(await s.client.callTool({ name: 'list_bookings', arguments: {} }))[0]);
      assert.equal(list.length, 500);
      const log = texts(await s.client.callTool({ name: 'read_log', arguments: {} }))[0];
      assert.ok(log.split('\n').length >= 10000);
      const booking = JSON.parse(texts(await s.client.callTool({ name: 'get_booking', arguments: { id: 'BK00007' } }))[0]);
      assert.equal(booking.id, 'BK00007');
    });
  });
}
