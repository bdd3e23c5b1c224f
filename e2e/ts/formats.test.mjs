// The knowledge-graph output formats of examples/knowledgegraph/memory.yaml
// through `ctxfit proxy --config`, in front of
// @modelcontextprotocol/server-memory, driven by the TypeScript SDK client,
// which validates every result's structuredContent against the tool's
// outputSchema (the proxy's rewritten one). The graph tools' results come
// back as their compact rendering, reading the call's arguments, smaller
// than the server's; ctxfit_details with the details cursor gives the
// original back. Two more proxies: one at a 300-token threshold (a rendering
// over it comes in chunks), one with formats of its own (a missing optional
// field renders empty, a missing required field falls back with a log line
// naming it).
//
// e2e/formats_test.go runs this file with CTXFIT_E2E_CTXFIT,
// CTXFIT_E2E_CONFIG and CTXFIT_E2E_MEMORY.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = need('CTXFIT_E2E_CTXFIT');
const config = need('CTXFIT_E2E_CONFIG');
const memoryFile = need('CTXFIT_E2E_MEMORY');

const here = path.dirname(fileURLToPath(import.meta.url));
const server = path.join(here, 'node_modules', '.bin', 'mcp-server-memory');
// The metrics file and the transformation log, when the Go side asks for them (it then checks that they agree).
const metrics = process.env.CTXFIT_METRICS_FILE
  ? { CTXFIT_COLLECT_METRICS: 'true', CTXFIT_METRICS_FILE: process.env.CTXFIT_METRICS_FILE, CTXFIT_FORMAT_LOG_FILE: process.env.CTXFIT_FORMAT_LOG_FILE ?? '' }
  : {};
const env = { ...getDefaultEnvironment(), ...metrics, MEMORY_FILE_PATH: memoryFile, CTXFIT_SECRET: 'an end-to-end secret of 32 bytes or more' };

async function connect(command, args, extraEnv = {}) {
  const transport = new StdioClientTransport({ command, args, env: { ...env, ...extraEnv }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'ctxfit-e2e-formats', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${command} ${args.join(' ')}: ${e.message}\n${stderr}`);
  }
  return client;
}

const texts = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text);

describe('server-memory behind ctxfit proxy with the knowledge-graph formats', () => {
  let direct, proxied;
  before(async () => {
    direct = await connect(server, []);
    proxied = await connect(ctxfit, ['proxy', '--config', config, '--', server]);
    await proxied.listTools(); // the client learns the (rewritten) output schemas it validates against
    const entities = [];
    for (let i = 0; i < 40; i++) {
      entities.push({
        name: `Engineer ${i}`, entityType: 'person',
        observations: [`Engineer ${i} works on the knowledge graph team in Berlin and reviews the ingestion pipeline.`,
          `Engineer ${i} joined in 2024 and leads the migration of the entity store to the new schema.`,
          `Engineer ${i} speaks at the weekly standup about the release plan and the open bugs.`],
      });
    }
    await direct.callTool({ name: 'create_entities', arguments: { entities } });
    const relations = entities.slice(1).map((e, i) => ({ from: e.name, to: entities[i].name, relationType: 'reports_to' }));
    await direct.callTool({ name: 'create_relations', arguments: { relations } });
  });
  after(async () => { await Promise.allSettled([direct?.close(), proxied?.close()]); });

  for (const [tool, args, head] of [
    ['read_graph', {}, 'Found 40 entities:\n1. Engineer 0 [person] - 3 observations\n'],
    ['search_nodes', { query: 'Berlin' }, 'Found 40 entities for "Berlin":\n1. Engineer 0 [person] - 3 observations\n'],
    // Under the threshold: formatted too.
    ['search_nodes', { query: 'Engineer 1' }, 'Found 11 entities for "Engineer 1":\n1. Engineer 1 [person] - 3 observations\n'],
    ['open_nodes', { names: ['Engineer 0', 'Engineer 1', 'Engineer 2', 'Engineer 3', 'Engineer 4', 'Engineer 5'] },
      'Found 6 entities named [Engineer 0 Engineer 1 Engineer 2 Engineer 3 Engineer 4 Engineer 5]:\n1. Engineer 0 [person] - 3 observations\n'],
  ]) {
    test(`${tool} comes back as its compact rendering, valid for its outputSchema, and leads back to the original`, async (t) => {
      const want = await direct.callTool({ name: tool, arguments: args });
      const got = await proxied.callTool({ name: tool, arguments: args }); // validated against the outputSchema
      assert.ok(!got.isError, texts(got).join(' '));
      assert.equal(got._meta?.['dev.ctxfit/strategy'], 'format', JSON.stringify(got._meta));
      assert.ok(got.structuredContent, 'a tool with an outputSchema gets structured content');
      assert.ok(got.structuredContent.text.startsWith(head), got.structuredContent.text.slice(0, 200));
      assert.match(got.structuredContent.text, /relations:\n- Engineer \d+ --reports_to--> Engineer \d+\n/);
      assert.equal(got.structuredContent.meta.format, 'graph');
      assert.ok(JSON.stringify(got).length < JSON.stringify(want).length,
        `the answer (${JSON.stringify(got).length} bytes) is smaller than the server's (${JSON.stringify(want).length})`);
      t.diagnostic(`savings of format graph on ${tool} ${JSON.stringify(args)}: ${got._meta['dev.ctxfit/originalTokens']} -> ` +
        `${got._meta['dev.ctxfit/tokens']} tokens (${(100 * (1 - got._meta['dev.ctxfit/tokens'] / got._meta['dev.ctxfit/originalTokens'])).toFixed(1)}%)`);

      const cursor = got._meta['dev.ctxfit/detailsCursor'];
      assert.ok(cursor, 'the details cursor is in _meta');
      const full = await proxied.callTool({ name: 'ctxfit_details', arguments: { cursor, fields: 'all' } });
      assert.ok(!full.isError, texts(full).join(' '));
      assert.deepEqual(JSON.parse(texts(full)[0]), want.structuredContent, 'ctxfit_details gives the original');
    });
  }

  test('a rendering over the threshold comes in chunks that rebuild it, with the details cursor to the original', async () => {
    // A second proxy with a threshold of 300 tokens, under read_graph's rendering (about 3,400 tokens).
    const small = await connect(ctxfit, ['proxy', '--config', config, '--', server], { CTXFIT_THRESHOLD: '300', CTXFIT_CHUNK_TOKENS: '300' });
    try {
      await small.listTools();
      const want = await direct.callTool({ name: 'read_graph', arguments: {} });
      let got = await small.callTool({ name: 'read_graph', arguments: {} }); // validated against the outputSchema
      assert.ok(!got.isError, texts(got).join(' '));
      assert.equal(got._meta?.['dev.ctxfit/strategy'], 'chunking', JSON.stringify(got._meta));
      assert.ok(got.structuredContent, 'a tool with an outputSchema gets structured content');
      const details = got._meta['dev.ctxfit/detailsCursor'];
      assert.ok(details, 'the details cursor is in _meta');
      assert.equal(got.structuredContent.detailsCursor, details, 'and in the chunk');
      let rendering = got.structuredContent.content;
      let next = got._meta['dev.ctxfit/nextCursor'];
      assert.ok(next, 'more than one chunk');
      for (let i = 0; next && i < 100; i++) {
        assert.ok(got._meta['dev.ctxfit/tokens'] <= got._meta['dev.ctxfit/hardCap'], 'each chunk within the hard cap');
        got = await small.callTool({ name: 'ctxfit_next', arguments: { cursor: next } });
        assert.ok(!got.isError, texts(got).join(' '));
        rendering += JSON.parse(texts(got)[0]).content;
        next = got._meta?.['dev.ctxfit/nextCursor'];
      }
      assert.equal(next, undefined, 'the chunks end');
      assert.ok(rendering.startsWith('Found 40 entities:\n1. Engineer 0 [person] - 3 observations\n'), rendering.slice(0, 200));
      assert.ok(rendering.endsWith('- Engineer 39 --reports_to--> Engineer 38\n'), rendering.slice(-200));
      const full = await small.callTool({ name: 'ctxfit_details', arguments: { cursor: details, fields: 'all' } });
      assert.ok(!full.isError, texts(full).join(' '));
      assert.deepEqual(JSON.parse(texts(full)[0]), want.structuredContent, 'ctxfit_details gives the original');
    } finally {
      await small.close();
    }
  });

  test('a missing optional field renders empty; a missing required field falls back with a log line naming it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxfit-formats-'));
    const settings = path.join(dir, 'optional.yaml');
    const log = path.join(dir, 'transformations.jsonl');
    fs.writeFileSync(settings, [
      'endpoints:',
      '  - match: read_graph',
      '    outputFormat:',
      '      formatId: optional',
      '      template: "{{len .entities}} entities; note: [{{.note}}]"',
      '      extractFields: [entities.name, note]',
      '  - match: search_nodes',
      '    outputFormat:',
      '      formatId: required',
      '      template: "owned by {{.owner}}: {{len .entities}} entities"',
      '      extractFields: [owner, entities.name]',
      '      requiredFields: [owner]',
      '',
    ].join('\n'));
    const other = await connect(ctxfit, ['proxy', '--config', settings, '--', server], { CTXFIT_FORMAT_LOG_FILE: log });
    try {
      await other.listTools();
      const got = await other.callTool({ name: 'read_graph', arguments: {} }); // validated against the outputSchema
      assert.ok(!got.isError, texts(got).join(' '));
      assert.equal(got._meta?.['dev.ctxfit/strategy'], 'format', JSON.stringify(got._meta));
      assert.equal(got.structuredContent.text, '40 entities; note: []', 'the missing optional field renders empty');

      const want = await direct.callTool({ name: 'search_nodes', arguments: { query: 'Engineer 1' } });
      const fell = await other.callTool({ name: 'search_nodes', arguments: { query: 'Engineer 1' } });
      assert.ok(!fell.isError, texts(fell).join(' '));
      assert.notEqual(fell._meta?.['dev.ctxfit/strategy'], 'format', JSON.stringify(fell._meta));
      assert.deepEqual(fell.structuredContent, want.structuredContent, 'the result as the server sent it');
      const entries = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const failed = entries.find((e) => e.level === 'error' && e.operation === 'search_nodes');
      assert.ok(failed, `a log line for the fallback: ${JSON.stringify(entries)}`);
      assert.match(failed.error, /"owner"/, 'naming the missing required field');
    } finally {
      await other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a result smaller than its rendering with a details cursor passes as it is', async () => {
    const got = await proxied.callTool({ name: 'open_nodes', arguments: { names: ['nobody'] } });
    const want = await direct.callTool({ name: 'open_nodes', arguments: { names: ['nobody'] } });
    assert.deepEqual(got.structuredContent, want.structuredContent);
    assert.equal(got._meta?.['dev.ctxfit/strategy'], undefined);
  });
});
