// The knowledge-graph output formats of examples/knowledgegraph/memory.yaml
// through mcpfit: a Go MCP server in the shape of server-memory's graph
// tools (the e2e test binary, E2E_GRAPH_SERVER=mcpfit) with mcpfit
// installed, driven by the TypeScript SDK client, which validates every
// result's structuredContent against the tool's (rewritten) outputSchema.
// The same server without mcpfit (E2E_GRAPH_SERVER=raw) gives the
// originals. read_graph has a threshold of 300 tokens there, under its
// rendering: the rendering comes in chunks, with the details cursor to
// the original.
//
// e2e/formats_test.go runs this file with CTXFIT_E2E_GRAPHSERVER and
// CTXFIT_E2E_CONFIG.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const server = need('CTXFIT_E2E_GRAPHSERVER');
const config = need('CTXFIT_E2E_CONFIG');

async function connect(mode) {
  const env = { ...getDefaultEnvironment(), E2E_GRAPH_SERVER: mode, E2E_GRAPH_CONFIG: config };
  const transport = new StdioClientTransport({ command: server, args: [], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'ctxfit-e2e-formats-mcpfit', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${server} (${mode}): ${e.message}\n${stderr}`);
  }
  return client;
}

const texts = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text);
const size = (res) => JSON.stringify(res).length;

describe('a Go server with mcpfit and the knowledge-graph formats', () => {
  let direct, fitted;
  before(async () => {
    [direct, fitted] = await Promise.all([connect('raw'), connect('mcpfit')]);
    await fitted.listTools(); // the client learns the (rewritten) output schemas it validates against
  });
  after(async () => { await Promise.allSettled([direct?.close(), fitted?.close()]); });

  const original = async (cursor) => {
    const full = await fitted.callTool({ name: 'ctxfit_details', arguments: { cursor, fields: 'all' } });
    assert.ok(!full.isError, texts(full).join(' '));
    return JSON.parse(texts(full)[0]);
  };

  for (const [tool, args, head] of [
    ['search_nodes', { query: 'Berlin' }, 'Found 40 entities for "Berlin":\n1. Engineer 0 [person] - 3 observations\n'],
    // Under the threshold: formatted too.
    ['search_nodes', { query: 'Engineer 1' }, 'Found 11 entities for "Engineer 1":\n1. Engineer 1 [person] - 3 observations\n'],
    // No query: the template's optional argument renders nothing.
    ['search_nodes', {}, 'Found 40 entities:\n1. Engineer 0 [person] - 3 observations\n'],
    // Twelve entities: with six, the rendering (sent twice, as the structured
    // content and its text block) with its details cursor is about as large
    // as the server's result, and the cursor's length decides.
    ['open_nodes', { names: Array.from({ length: 12 }, (_, i) => `Engineer ${i}`) },
      `Found 12 entities named [${Array.from({ length: 12 }, (_, i) => `Engineer ${i}`).join(' ')}]:\n1. Engineer 0 [person] - 3 observations\n`],
  ]) {
    test(`${tool} ${JSON.stringify(args)} comes back as its compact rendering, valid for its outputSchema, and leads back to the original`, async (t) => {
      const want = await direct.callTool({ name: tool, arguments: args });
      const got = await fitted.callTool({ name: tool, arguments: args }); // validated against the outputSchema
      assert.ok(!got.isError, texts(got).join(' '));
      assert.equal(got._meta?.['dev.ctxfit/strategy'], 'format', JSON.stringify(got._meta));
      assert.ok(got.structuredContent, 'a tool with an outputSchema gets structured content');
      assert.ok(got.structuredContent.text.startsWith(head), got.structuredContent.text.slice(0, 200));
      assert.equal(got.structuredContent.meta.format, 'graph');
      assert.ok(size(got) < size(want), `the answer (${size(got)} bytes) is smaller than the server's (${size(want)})`);
      assert.ok(got._meta['dev.ctxfit/tokens'] <= got._meta['dev.ctxfit/hardCap'], 'within the hard cap');
      t.diagnostic(`savings of format graph on ${tool} ${JSON.stringify(args)}: ${got._meta['dev.ctxfit/originalTokens']} -> ` +
        `${got._meta['dev.ctxfit/tokens']} tokens (${(100 * (1 - got._meta['dev.ctxfit/tokens'] / got._meta['dev.ctxfit/originalTokens'])).toFixed(1)}%)`);
      const cursor = got._meta['dev.ctxfit/detailsCursor'];
      assert.ok(cursor, 'the details cursor is in _meta');
      assert.deepEqual(await original(cursor), want.structuredContent, 'ctxfit_details gives the original');
    });
  }

  test('a rendering over the threshold comes in chunks that rebuild it, with the details cursor to the original', async () => {
    const want = await direct.callTool({ name: 'read_graph', arguments: {} });
    let got = await fitted.callTool({ name: 'read_graph', arguments: {} }); // validated against the outputSchema
    assert.ok(!got.isError, texts(got).join(' '));
    assert.equal(got._meta?.['dev.ctxfit/strategy'], 'chunking', JSON.stringify(got._meta));
    assert.ok(got.structuredContent, 'a tool with an outputSchema gets structured content');
    assert.ok(size(got) < size(want), `the first chunk (${size(got)} bytes) is smaller than the server's answer (${size(want)})`);
    const details = got._meta['dev.ctxfit/detailsCursor'];
    assert.ok(details, 'the details cursor is in _meta');
    assert.equal(got.structuredContent.detailsCursor, details, 'and in the chunk');
    assert.match(texts(got).join('\n'), /compact rendering/);
    assert.match(texts(got).join('\n'), /ctxfit_details/, 'the guidance names the details tool');

    let rendering = got.structuredContent.content;
    let next = got._meta['dev.ctxfit/nextCursor'];
    assert.ok(next, 'more than one chunk');
    for (let i = 0; next && i < 100; i++) {
      assert.ok(got._meta['dev.ctxfit/tokens'] <= got._meta['dev.ctxfit/hardCap'], 'each chunk within the hard cap');
      got = await fitted.callTool({ name: 'ctxfit_next', arguments: { cursor: next } });
      assert.ok(!got.isError, texts(got).join(' '));
      rendering += JSON.parse(texts(got)[0]).content;
      next = got._meta?.['dev.ctxfit/nextCursor'];
    }
    assert.equal(next, undefined, 'the chunks end');
    assert.ok(rendering.startsWith('Found 40 entities:\n1. Engineer 0 [person] - 3 observations\n'), rendering.slice(0, 200));
    assert.match(rendering, /39 relations:\n- Engineer 1 --reports_to--> Engineer 0\n/);
    assert.ok(rendering.endsWith('- Engineer 39 --reports_to--> Engineer 38\n'), rendering.slice(-200));
    assert.deepEqual(await original(details), want.structuredContent, 'ctxfit_details gives the original');
  });

  test('a result whose required field is missing passes as it is', async () => {
    const got = await fitted.callTool({ name: 'open_nodes', arguments: { names: ['nobody'] } });
    const want = await direct.callTool({ name: 'open_nodes', arguments: { names: ['nobody'] } });
    assert.deepEqual(got.structuredContent, want.structuredContent);
    assert.equal(got._meta?.['dev.ctxfit/strategy'], undefined);
  });
});
