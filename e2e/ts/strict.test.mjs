// Every result through `ctxfit proxy` passes the TypeScript SDK client's
// strict checks (structuredContent must match a tool's outputSchema, and a
// tool with an outputSchema must return structuredContent), whatever the
// strategy: every tool of the examples (-raw) and of the npm servers in the
// lockfile (everything, memory, filesystem) is called through the proxy
// with each strategy forced per tool (a threshold of 1: pages, parts,
// summaries, chunks; format toon; an output format; a shaping time-out of a
// nanosecond: cuts). Every result read through the proxy is written to the
// JSON Lines file CTXFIT_E2E_OUT, where e2e/strict_test.go counts it with
// the exact tokenizer against the hard cap.
//
// Then: resources/read of the ctxfit:// link to a huge original answers
// ranges within the hard cap that rebuild it; an MCP App page (ui://,
// text/html;profile=mcp-app) passes the proxy unchanged.
//
// e2e/strict_test.go runs this file with CTXFIT_E2E_CTXFIT,
// CTXFIT_E2E_MCPSERVER, CTXFIT_E2E_MCPGOSERVER (may be empty),
// CTXFIT_E2E_FIXTURES, CTXFIT_E2E_MEMORY, CTXFIT_E2E_TMP and CTXFIT_E2E_OUT.

import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const need = (name, required = true) => {
  const v = process.env[name] ?? '';
  if (required && v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = need('CTXFIT_E2E_CTXFIT');
const mcpserver = need('CTXFIT_E2E_MCPSERVER');
const mcpgoserver = need('CTXFIT_E2E_MCPGOSERVER', false);
const fixtures = need('CTXFIT_E2E_FIXTURES');
const memoryFile = need('CTXFIT_E2E_MEMORY');
const tmp = need('CTXFIT_E2E_TMP');
const out = need('CTXFIT_E2E_OUT');

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);
const HARD_CAP = 3000;
const env = { ...getDefaultEnvironment(), MEMORY_FILE_PATH: memoryFile, CTXFIT_SECRET: 'an end-to-end secret of 32 bytes or more' };

const clients = [];
after(async () => { await Promise.allSettled(clients.map((c) => c.close())); });

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'ctxfit-e2e-strict', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'e2e', role: 'assistant', content: { type: 'text', text: 'ok' } }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${command} ${args.join(' ')}: ${e.message}\n${stderr}`);
  }
  clients.push(client);
  return client;
}

const lines = (n, what) => Array.from({ length: n }, (_, i) => `line ${i}: ${what}, café 東京 "quoted" <&>`).join('\n');

// The upstreams, and arguments for their tools that give large results
// where they can; a tool not named gets its required arguments from its
// input schema. Tools that would reach the internet, move files or run
// long are left out.
const upstreams = [
  { name: 'examples/mcpserver', command: mcpserver, args: ['-raw'] },
  ...(mcpgoserver ? [{ name: 'examples/mcpgoserver', command: mcpgoserver, args: ['-raw'] }] : []),
  {
    name: 'server-everything', command: bin('mcp-server-everything'), args: [],
    skip: ['gzip-file-as-resource', 'simulate-research-query', 'toggle-simulated-logging', 'toggle-subscriber-updates'],
    args_: {
      echo: { message: lines(3000, 'an echo') },
      'get-sum': { a: 1, b: 2 },
      'trigger-long-running-operation': { duration: 1, steps: 1 },
      'get-structured-content': { location: 'New York' },
    },
  },
  {
    name: 'server-memory', command: bin('mcp-server-memory'), args: [],
    first: [['create_entities', {
      entities: Array.from({ length: 200 }, (_, i) => ({
        name: `entity ${i}`, entityType: 'thing', observations: [`observation ${i} of a thing with a long description`, 'another'],
      })),
    }]],
    args_: {
      search_nodes: { query: 'entity' },
      open_nodes: { names: Array.from({ length: 100 }, (_, i) => `entity ${i}`) },
      add_observations: { observations: [{ entityName: 'entity 1', contents: ['more'] }] },
    },
    skip: ['delete_entities', 'delete_observations', 'delete_relations', 'create_relations'],
  },
  {
    name: 'server-filesystem', command: bin('mcp-server-filesystem'), args: [fixtures],
    skip: ['move_file', 'edit_file', 'write_file', 'create_directory', 'read_media_file'],
    args_: {
      read_file: { path: path.join(fixtures, 'app.log') },
      read_text_file: { path: path.join(fixtures, 'app.log') },
      read_multiple_files: { paths: [path.join(fixtures, 'app.log'), path.join(fixtures, 'notes.txt')] },
      list_directory: { path: path.join(fixtures, 'many') },
      list_directory_with_sizes: { path: path.join(fixtures, 'many') },
      directory_tree: { path: fixtures },
      search_files: { path: fixtures, pattern: 'report' },
      get_file_info: { path: path.join(fixtures, 'app.log') },
    },
  },
];

// The strategies, forced for every tool by its endpoint.
const base = { threshold: 1, hardCap: HARD_CAP };
const strategies = [
  { name: 'a threshold of 1', endpoint: {} },
  { name: 'format toon', endpoint: { format: 'toon' } },
  {
    // A rendering is sent only when it fits the threshold beside its
    // envelope: a threshold of 1 would leave no room.
    name: 'an output format',
    endpoint: { threshold: 1000, outputFormat: { template: 'Found {{len .results}} bookings.', extractFields: ['results.id'] } },
  },
  { name: 'a shaping time-out of a nanosecond', top: { shapeTimeout: '1ns' }, endpoint: {} },
];

// argsFor builds the required arguments of a tool from its input schema.
function argsFor(schema) {
  const args = {};
  for (const k of schema?.required ?? []) {
    const p = schema.properties?.[k] ?? {};
    if (p.enum) args[k] = p.enum[0];
    else if (p.type === 'number' || p.type === 'integer') args[k] = 1;
    else if (p.type === 'boolean') args[k] = false;
    else if (p.type === 'array') args[k] = [];
    else if (p.type === 'object') args[k] = {};
    else args[k] = 'a';
  }
  return args;
}

const strict = /output schema|structured content|structuredContent/i;
const seen = {};

function record(name, res) {
  const media = res.content?.some((c) => c.type === 'image' || c.type === 'audio' || (c.type === 'resource' && c.resource?.blob));
  appendFileSync(out, JSON.stringify({ case: name, media: !!media, result: res }) + '\n');
}

for (const up of upstreams) {
  describe(`${up.name} behind the proxy`, () => {
    for (const st of strategies) {
      test(`accepts every result with ${st.name} forced`, async () => {
        const direct = await connect(up.command, up.args);
        const { tools } = await direct.listTools();
        await direct.close();
        const cfg = { ...(st.top ?? {}), endpoints: tools.map((t) => ({ match: t.name, ...base, ...st.endpoint })) };
        const file = path.join(tmp, `${up.name.replace(/\W/g, '_')}-${st.name.replace(/\W/g, '_')}.yaml`);
        writeFileSync(file, JSON.stringify(cfg));
        const proxy = await connect(ctxfit, ['proxy', '--config', file, '--', up.command, ...up.args]);
        await proxy.listTools(); // the client caches the output schemas it validates against
        const calls = [...(up.first ?? [])];
        for (const t of tools) {
          if (!(up.skip ?? []).includes(t.name) && !(up.first ?? []).some(([n]) => n === t.name)) {
            calls.push([t.name, up.args_?.[t.name] ?? argsFor(t.inputSchema)]);
          }
        }
        for (const [name, args] of calls) {
          let res;
          try {
            res = await proxy.callTool({ name, arguments: args }, undefined, { timeout: 30000 });
          } catch (e) {
            assert.doesNotMatch(String(e.message), strict, `${up.name} ${name} with ${st.name}: the client rejected the result`);
            continue; // a protocol error of the tool itself
          }
          const caseName = `${up.name} ${name} with ${st.name}`;
          record(caseName, res);
          const strategy = res._meta?.['dev.ctxfit/strategy'];
          if (strategy) seen[strategy] = (seen[strategy] ?? 0) + 1;
          // The first continuations too (they have no output schema).
          let next = res._meta?.['dev.ctxfit/nextCursor'];
          for (let i = 0; next && i < 3; i++) {
            const more = await proxy.callTool({ name: 'ctxfit_next', arguments: { cursor: next } });
            assert.ok(!more.isError, `${caseName}: ${JSON.stringify(more.content).slice(0, 300)}`);
            record(caseName, more);
            next = more._meta?.['dev.ctxfit/nextCursor'];
          }
        }
      });
    }
  });
}

test('every strategy was seen', () => {
  for (const s of ['pagination', 'summary', 'chunking', 'format', 'cut']) {
    assert.ok(seen[s] > 0, `no result had strategy ${s}: ${JSON.stringify(seen)}`);
  }
});

test('resources/read of the link to a huge original answers ranges within the hard cap that rebuild it', async () => {
  const file = path.join(tmp, 'link.yaml');
  writeFileSync(file, JSON.stringify({ endpoints: [{ match: 'read_log', threshold: 1000, hardCap: HARD_CAP }] }));
  const proxy = await connect(ctxfit, ['proxy', '--config', file, '--', mcpserver, '-raw']);
  const direct = await connect(mcpserver, ['-raw']);
  const want = await direct.callTool({ name: 'read_log', arguments: {} });
  const first = await proxy.callTool({ name: 'read_log', arguments: {} });
  const link = first.content.find((c) => c.type === 'resource_link' && c._meta?.['dev.ctxfit/original']);
  assert.ok(link, 'a shaped result links its original');
  let uri = link.uri;
  let got = '';
  let reads = 0;
  while (uri) {
    const r = await proxy.readResource({ uri });
    reads++;
    assert.ok(reads < 1000);
    record('resources/read of a ctxfit link', { content: r.contents.map((c) => ({ type: 'text', text: c.text })) });
    got += r.contents[0].text;
    uri = r._meta?.['dev.ctxfit/nextRange'];
    if (uri) {
      assert.equal(r.contents[1]._meta?.['dev.ctxfit/guidance'], true, "the line on how to read on is marked as ctxfit's");
    }
  }
  assert.ok(reads > 1, 'the original is over the hard cap: read in ranges');
  // The link leads to the whole result as the server sent it (its content
  // list included): its text is the log, character for character.
  const whole = JSON.parse(got);
  assert.deepEqual(whole, want, 'the ranges rebuild the whole result');
  assert.equal(whole.content[0].text, want.content[0].text, 'the log, character for character');
});

test('an MCP App page passes the proxy unchanged', async () => {
  const ui = path.join(here, 'uiserver.mjs');
  const file = path.join(tmp, 'ui.yaml');
  writeFileSync(file, JSON.stringify({ threshold: 1, hardCap: HARD_CAP }));
  const proxy = await connect(ctxfit, ['proxy', '--config', file, '--', process.execPath, ui]);
  const direct = await connect(process.execPath, [ui]);
  const want = await direct.readResource({ uri: 'ui://viewer/app.html' });
  const got = await proxy.readResource({ uri: 'ui://viewer/app.html' });
  assert.ok(want.contents[0].text.length > 3_000_000);
  assert.deepEqual(got.contents, want.contents, 'the page is not shaped: a host renders it');
});
