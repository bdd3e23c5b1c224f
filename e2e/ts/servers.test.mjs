// Real third-party MCP servers (from npm: server-filesystem, -memory and
// -everything) behind `ctxfit proxy`, driven by the TypeScript SDK client.
// Each case calls a tool directly and through the proxy, follows every
// cursor and part of the shaped result (follow.mjs), and checks that the
// rebuilt result is the direct one, character for character. Every result
// read through the proxy is written, with the direct one, to the JSON Lines
// file CTXFIT_E2E_OUT, where e2e/servers_test.go counts them with the exact
// tokenizer: nothing over the hard cap, and reading everything costs at
// most 1.3x the original plus an envelope per response.
//
// e2e/servers_test.go runs this file with CTXFIT_E2E_CTXFIT (the binary),
// CTXFIT_E2E_FIXTURES (a directory of files to read), CTXFIT_E2E_MEMORY (the
// memory server's file) and CTXFIT_E2E_OUT.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { body, rebuild } from './follow.mjs';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = need('CTXFIT_E2E_CTXFIT');
const fixtures = need('CTXFIT_E2E_FIXTURES');
const memoryFile = need('CTXFIT_E2E_MEMORY');
const out = need('CTXFIT_E2E_OUT');

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);

// The environment of every server, direct or behind the proxy: get-env
// prints it, so both must see the same, with one huge variable.
const env = {
  ...getDefaultEnvironment(),
  MEMORY_FILE_PATH: memoryFile,
  // One variable may hold at most 128 KiB (Linux's MAX_ARG_STRLEN).
  CTXFIT_E2E_HUGE: 'x'.repeat(120000) + '\n' + 'an end of the huge variable',
};

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'ctxfit-e2e-servers', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${command} ${args.join(' ')}: ${e.message}\n${stderr}`);
  }
  return client;
}

// The proxy starts its upstream without CTXFIT_* variables unless told.
const proxied = (server, args = []) => connect(ctxfit, ['proxy', '--pass-env', 'CTXFIT_E2E_HUGE', '--', bin(server), ...args]);
const direct = (server, args = []) => connect(bin(server), args);

// record writes a result to the file the Go test checks.
function record(name, kind, res) {
  appendFileSync(out, JSON.stringify({ case: name, kind, result: res }) + '\n');
}

const texts = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text);

// whole follows every cursor and part of a shaped result through the
// proxy, recording each response, and returns the rebuilt original.
async function whole(client, name, first) {
  return rebuild(body(first), async (cursor, part) => {
    const res = await client.callTool({ name: 'ctxfit_next', arguments: part ? { cursor, part } : { cursor } });
    assert.ok(!res.isError, texts(res).join(' '));
    record(name, 'continuation', res);
    return body(res);
  });
}

// check calls tool directly and through the proxy, and returns both
// results and the rebuilt text of the shaped one.
async function check(name, d, p, tool, args) {
  const want = await d.callTool({ name: tool, arguments: args });
  record(name, 'direct', want);
  const got = await p.callTool({ name: tool, arguments: args });
  assert.ok(!got.isError, texts(got).join(' '));
  record(name, 'first', got);
  const strategy = got._meta?.['dev.ctxfit/strategy'];
  let rebuilt = null;
  if (strategy && strategy !== 'passthrough' && texts(got).length > 0) rebuilt = await whole(p, name, got);
  return { want, got, rebuilt, strategy };
}

describe('server-filesystem behind ctxfit proxy', () => {
  let d, p;
  before(async () => {
    [d, p] = await Promise.all([direct('mcp-server-filesystem', [fixtures]), proxied('mcp-server-filesystem', [fixtures])]);
  });
  after(async () => { await d?.close(); await p?.close(); });

  test('a 2 MB log: chunks that are the file, character for character', async () => {
    const r = await check('filesystem read_text_file', d, p, 'read_text_file', { path: path.join(fixtures, 'app.log') });
    assert.equal(r.strategy, 'chunking');
    assert.equal(r.rebuilt, JSON.stringify(r.want.structuredContent), 'the structured content, rebuilt');
  });

  test('75 files read at once with 3 KB of arguments: within the cap, nothing lost', async () => {
    const paths = readdirSync(path.join(fixtures, 'many')).sort().map((f) => path.join(fixtures, 'many', f));
    assert.ok(JSON.stringify({ paths }).length > 2900, 'the arguments are large');
    const r = await check('filesystem read_multiple_files', d, p, 'read_multiple_files', { paths });
    assert.ok(r.strategy);
    assert.equal(r.rebuilt, JSON.stringify(r.want.structuredContent));
  });

  test('an image: the model sees the image, not its base64', async () => {
    const r = await check('filesystem read_media_file png', d, p, 'read_media_file', { path: path.join(fixtures, 'picture.png') });
    const img = r.got.content.find((c) => c.type === 'image');
    assert.ok(img, 'the image block stays');
    assert.equal(img.data, r.want.content[0].data, 'byte for byte');
  });

  test('find, don\'t page: one line of the log found by pattern, with its number, in one call', async () => {
    const log = readFileSync(path.join(fixtures, 'app.log'), 'utf8');
    const lines = log.split('\n');
    const counts = new Map();
    for (const m of log.matchAll(/request_id=(req-\d+)/g)) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
    const late = [...counts].filter(([, n]) => n === 1).map(([id]) => id)
      .map((id) => ({ id, line: lines.findIndex((l) => l.includes(`request_id=${id} `)) + 1 }))
      .filter((x) => x.line > lines.length * 0.9);
    assert.ok(late.length > 0, 'a request ID that occurs once, near the end');
    const { id, line } = late[0];

    const first = await p.callTool({ name: 'read_text_file', arguments: { path: path.join(fixtures, 'app.log') } });
    const cursor = first._meta?.['dev.ctxfit/nextCursor'];
    assert.ok(cursor, 'the log is chunked');
    const found = await p.callTool({ name: 'ctxfit_search', arguments: { cursor, pattern: `request_id=${id} `, literal: true } });
    assert.ok(!found.isError, texts(found).join(' '));
    record('filesystem ctxfit_search', 'search', found);
    const page = JSON.parse(texts(found)[0]);
    assert.equal(page.meta.totalMatches, 1);
    assert.equal(page.matches[0].line, line, 'the line number in the file');
    assert.equal(page.matches[0].text, lines[line - 1], 'the line itself');
  });

  test('the original, as a resource: resources/read of the result\'s link is the upstream\'s result', async () => {
    const args = { path: path.join(fixtures, 'app.log') };
    const want = await d.callTool({ name: 'read_text_file', arguments: args });
    const got = await p.callTool({ name: 'read_text_file', arguments: args });
    const link = got.content.find((c) => c.type === 'resource_link' && c._meta?.['dev.ctxfit/original']);
    assert.ok(link, `a link to the original: ${JSON.stringify(got.content.map((c) => c.type))}`);
    // Over the hard cap, read whole it comes in ranges within the cap,
    // each naming the next in _meta.
    let whole = '';
    for (let uri = link.uri, i = 0; uri; i++) {
      assert.ok(i < 1000, 'too many ranges');
      const read = await p.readResource({ uri });
      whole += read.contents[0].text;
      uri = read._meta?.['dev.ctxfit/nextRange'];
    }
    assert.equal(link.size, Buffer.byteLength(whole));
    assert.deepEqual(JSON.parse(whole), want, 'the whole result, content list included');
    const part = await p.readResource({ uri: `${link.uri}?bytes=0-99` });
    assert.equal(part.contents[0].text, whole.slice(0, 100), 'a byte range');
  });

  test('a binary file: held back behind a link that reads it back', async () => {
    const r = await check('filesystem read_media_file bin', d, p, 'read_media_file', { path: path.join(fixtures, 'data.bin') });
    const link = r.got.content.find((c) => c.type === 'resource_link' && !c._meta?.['dev.ctxfit/original']);
    assert.ok(link, `a resource_link: ${JSON.stringify(r.got.content).slice(0, 300)}`);
    const read = await p.readResource({ uri: link.uri });
    assert.equal(read.contents[0].blob, r.want.content[0].resource.blob, 'resources/read gives the bytes back');
  });
});

describe('server-memory behind ctxfit proxy', () => {
  let d, p;
  before(async () => {
    [d, p] = await Promise.all([direct('mcp-server-memory'), proxied('mcp-server-memory')]);
    for (let b = 0; b < 2000; b += 500) {
      const entities = [];
      for (let i = b; i < b + 500; i++) {
        entities.push({ name: `entity-${i}`, entityType: i % 3 ? 'person' : 'place',
          observations: [`observed <${i}> & noted`, `met ${i % 97} others`] });
      }
      const res = await d.callTool({ name: 'create_entities', arguments: { entities } });
      assert.ok(!res.isError, texts(res).join(' '));
    }
    const relations = [];
    for (let i = 0; i < 400; i++) relations.push({ from: `entity-${i}`, to: `entity-${i + 1}`, relationType: 'knows' });
    const res = await d.callTool({ name: 'create_relations', arguments: { relations } });
    assert.ok(!res.isError, texts(res).join(' '));
  });
  after(async () => { await d?.close(); await p?.close(); });

  test('a graph of 2,000 entities and 400 relations: pages, nothing lost, nothing repeated', async () => {
    const r = await check('memory read_graph', d, p, 'read_graph', {});
    assert.equal(r.strategy, 'pagination');
    assert.equal(r.rebuilt, JSON.stringify(r.want.structuredContent));
  });

  test('find, don\'t page: a jq question over the graph answered in one call', async () => {
    const want = await d.callTool({ name: 'read_graph', arguments: {} });
    const places = want.structuredContent.entities.filter((e) => e.entityType === 'place').length;
    const first = await p.callTool({ name: 'read_graph', arguments: {} });
    const cursor = first._meta?.['dev.ctxfit/nextCursor'];
    assert.ok(cursor, 'the graph is paged');
    const res = await p.callTool({ name: 'ctxfit_query',
      arguments: { cursor, expression: '[.entities[] | select(.entityType == "place")] | length' } });
    assert.ok(!res.isError, texts(res).join(' '));
    record('memory ctxfit_query', 'query', res);
    assert.deepEqual(JSON.parse(texts(res)[0]), [places], 'the answer, from the whole graph');
  });
});

describe('server-everything behind ctxfit proxy', () => {
  let d, p;
  before(async () => {
    [d, p] = await Promise.all([direct('mcp-server-everything'), proxied('mcp-server-everything')]);
  });
  after(async () => { await d?.close(); await p?.close(); });

  test('get-env with one huge variable: the other variables, and all of it back', async () => {
    const r = await check('everything get-env', d, p, 'get-env', {});
    assert.ok(r.strategy);
    const first = texts(r.got)[0];
    assert.match(first, /"PATH"|"HOME"|"MEMORY_FILE_PATH"/, 'the small variables are shown');
    assert.equal(r.rebuilt, texts(r.want)[0], 'character for character');
  });
});
