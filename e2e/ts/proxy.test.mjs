// The whole protocol through `ctxfit proxy`, with the TypeScript SDK
// client: @modelcontextprotocol/server-everything directly, and behind the
// proxy over stdio, over --listen (streamable HTTP, a session per client)
// and with the server itself over streamable HTTP (--upstream-url). Every
// answer through the proxy must be the direct one; the differences the
// proxy makes on purpose are named where they are allowed:
//
//   - initialize: capabilities.tools.listChanged is true (a reconnected
//     upstream may list other tools);
//   - tools/list: ctxfit's four tools are added; each upstream tool's
//     _meta gains anthropic/maxResultSizeChars, and an outputSchema is
//     wrapped in anyOf [original, page, summary, chunk, text];
//   - results over the budget are shaped (none of the calls here is).
//
// Then server-filesystem (its directories from each client's roots) and
// server-memory behind `proxy --listen`.
//
// e2e/proxy_test.go runs this file with CTXFIT_E2E_CTXFIT (the binary) and
// CTXFIT_E2E_PORT (a free port for the HTTP upstream).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema, LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const ctxfit = need('CTXFIT_E2E_CTXFIT');
const port = need('CTXFIT_E2E_PORT');
const here = path.dirname(fileURLToPath(import.meta.url));
const everything = path.join(here, 'node_modules', '.bin', 'mcp-server-everything');
const env = { ...getDefaultEnvironment(), CTXFIT_SECRET: process.env.CTXFIT_SECRET ?? '' };

const children = [];
function start(command, args, extraEnv, ready) {
  const child = spawn(command, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = ready(stderr);
      if (m) resolve(m);
    });
    child.on('exit', (code) => reject(new Error(`${command} exited (${code}): ${stderr}`)));
  });
}

// A client with every capability the server can use, whose roots are
// what roots() returns.
function newClient(roots) {
  const client = new Client({ name: 'ctxfit-e2e-proxy', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: 'e2e', role: 'assistant', content: { type: 'text', text: `you asked: ${req.params.messages[0].content.text}` },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots() }));
  client.updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { client.updates.push(n.params.uri); });
  client.logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { client.logs.push(n.params.level); });
  return client;
}

async function stdio(command, args, roots) {
  const client = newClient(roots);
  await client.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }));
  return client;
}

async function http(url, roots) {
  const client = newClient(roots);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const rootsA = () => [{ uri: 'file:///tmp/a', name: 'a' }];
const rootsB = () => [{ uri: 'file:///tmp/b', name: 'b' }];
let listenURL;
const modes = {};

before(async () => {
  listenURL = await start(ctxfit, ['proxy', '--listen', '127.0.0.1:0', '--', everything], {},
    (s) => s.match(/"url":"(http:\/\/[^"]+)"/)?.[1]);
  await start(everything, ['streamableHttp'], { PORT: port }, (s) => s.includes('listening'));
  modes.direct = await stdio(everything, [], rootsA);
  modes['proxy over stdio'] = await stdio(ctxfit, ['proxy', '--', everything], rootsA);
  modes['proxy --listen'] = await http(listenURL, rootsA);
  modes['proxy --upstream-url'] = await stdio(ctxfit, ['proxy', '--upstream-url', `http://127.0.0.1:${port}/mcp`], rootsA);
});

after(async () => {
  await Promise.allSettled(Object.values(modes).map((c) => c.close()));
  for (const c of children) c.kill('SIGTERM');
});

const proxied = () => Object.entries(modes).filter(([name]) => name !== 'direct');

// withoutOwnChanges undoes on a proxied tools/list entry what the proxy
// does on purpose, checking that it did just that.
function withoutOwnChanges(tool, original) {
  const t = structuredClone(tool);
  assert.equal(typeof t._meta?.['anthropic/maxResultSizeChars'], 'number', `${t.name}: _meta gains the result size`);
  delete t._meta['anthropic/maxResultSizeChars'];
  if (Object.keys(t._meta).length === 0) delete t._meta;
  if (original.outputSchema) {
    assert.ok(Array.isArray(t.outputSchema.anyOf), `${t.name}: outputSchema is wrapped`);
    assert.deepEqual(t.outputSchema.anyOf[0].properties, original.outputSchema.properties);
    t.outputSchema = original.outputSchema;
  }
  return t;
}

test('initialize: the upstream capabilities, server info and instructions, and listChanged on tools', () => {
  const want = modes.direct.getServerCapabilities();
  for (const [name, c] of proxied()) {
    const got = structuredClone(c.getServerCapabilities());
    assert.equal(got.tools.listChanged, true, name);
    got.tools.listChanged = want.tools.listChanged;
    if (got.tools.listChanged === undefined) delete got.tools.listChanged;
    assert.deepEqual(got, want, name);
    assert.deepEqual(c.getServerVersion(), modes.direct.getServerVersion(), name);
    assert.equal(c.getInstructions(), modes.direct.getInstructions(), name);
  }
});

test('tools/list: the same tools and metadata, and ctxfit\'s four', async () => {
  const want = (await modes.direct.listTools()).tools;
  for (const [name, c] of proxied()) {
    const got = (await c.listTools()).tools;
    const own = got.filter((t) => t.name.startsWith('ctxfit_')).map((t) => t.name).sort();
    assert.deepEqual(own, ['ctxfit_details', 'ctxfit_next', 'ctxfit_query', 'ctxfit_search'], name);
    const theirs = got.filter((t) => !t.name.startsWith('ctxfit_'));
    assert.equal(theirs.length, want.length, name);
    for (const w of want) {
      const g = theirs.find((t) => t.name === w.name);
      assert.ok(g, `${name}: ${w.name} is listed`);
      assert.deepEqual(withoutOwnChanges(g, w), w, `${name}: ${w.name}`);
    }
  }
});

test('resources, templates, read, prompts and completions are the upstream\'s', async () => {
  const d = modes.direct;
  const resources = await d.listResources();
  const templates = await d.listResourceTemplates();
  const prompts = await d.listPrompts();
  const uri = resources.resources[0]?.uri ?? 'demo://resource/dynamic/text/1';
  const read = await d.readResource({ uri });
  const prompt = await d.getPrompt({ name: 'simple-prompt' });
  const args = await d.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'TX' } });
  const completion = await d.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } });
  for (const [name, c] of proxied()) {
    assert.deepEqual(await c.listResources(), resources, name);
    assert.deepEqual(await c.listResourceTemplates(), templates, name);
    assert.deepEqual(await c.listPrompts(), prompts, name);
    assert.deepEqual(await c.readResource({ uri }), read, name);
    assert.deepEqual(await c.getPrompt({ name: 'simple-prompt' }), prompt, name);
    assert.deepEqual(await c.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'TX' } }), args, name);
    assert.deepEqual(await c.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } }), completion, name);
    await c.setLoggingLevel('debug');
  }
});

test('progress: the same notifications, and cancellation reaches the upstream', async () => {
  const run = async (c) => {
    const seen = [];
    const res = await c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 4 } },
      undefined, { onprogress: (p) => seen.push(p.progress) });
    return { seen, res };
  };
  // The last notification may come after the result, which the client
  // then drops, directly as through the proxy: at least three of four.
  const want = await run(modes.direct);
  assert.ok(want.seen.length >= 3, `direct: ${want.seen}`);
  for (const [name, c] of proxied()) {
    const got = await run(c);
    assert.deepEqual(got.res, want.res, name);
    assert.ok(got.seen.length >= 3, `${name}: ${got.seen}`);
    assert.deepEqual(got.seen, [...got.seen].sort((a, b) => a - b), `${name}: in order`);
    const abort = new AbortController();
    const call = c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 } },
      undefined, { signal: abort.signal, onprogress: () => abort.abort('enough') });
    await assert.rejects(call, name);
    assert.deepEqual(await c.ping(), {}, `${name}: the session goes on`);
  }
});

test('sampling, elicitation and roots reach the client that asked', async () => {
  const calls = [
    { name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } },
    { name: 'trigger-elicitation-request', arguments: {} },
    { name: 'get-roots-list', arguments: {} },
  ];
  for (const call of calls) {
    const want = await modes.direct.callTool(call);
    for (const [name, c] of proxied()) {
      assert.deepEqual(await c.callTool(call), want, `${name}: ${call.name}`);
    }
  }
});

test('--listen: each client has its own upstream session (its own roots)', async () => {
  const other = await http(listenURL, rootsB);
  try {
    const a = await modes['proxy --listen'].callTool({ name: 'get-roots-list', arguments: {} });
    const b = await other.callTool({ name: 'get-roots-list', arguments: {} });
    assert.match(JSON.stringify(a.content), /file:\/\/\/tmp\/a/);
    assert.doesNotMatch(JSON.stringify(a.content), /file:\/\/\/tmp\/b/);
    assert.match(JSON.stringify(b.content), /file:\/\/\/tmp\/b/);
  } finally {
    await other.close();
  }
});

test('roots/list_changed makes the upstream ask again', async () => {
  let roots = rootsA();
  const c = await stdio(ctxfit, ['proxy', '--', everything], () => roots);
  try {
    roots = rootsB();
    await c.sendRootsListChanged();
    let text = '';
    for (let i = 0; i < 100 && !text.includes('/tmp/b'); i++) {
      text = JSON.stringify((await c.callTool({ name: 'get-roots-list', arguments: {} })).content);
      if (!text.includes('/tmp/b')) await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(text, /file:\/\/\/tmp\/b/);
  } finally {
    await c.close();
  }
});

test('resources/subscribe: notifications/resources/updated reach the client', async () => {
  const uri = 'demo://resource/dynamic/text/1';
  await Promise.all(Object.entries(modes).map(async ([name, c]) => {
    await c.subscribeResource({ uri });
    await c.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    for (let i = 0; i < 300 && !c.updates.includes(uri); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(c.updates.includes(uri), `${name}: an update of ${uri}`);
    await c.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await c.unsubscribeResource({ uri });
  }));
});

test('tasks: a task-augmented call runs, is polled and gives its result through the proxy', async () => {
  const run = async (c) => {
    await c.listTools(); // the client learns that the tool takes a task
    const kinds = [];
    let result;
    for await (const m of c.experimental.tasks.callToolStream({ name: 'simulate-research-query', arguments: { topic: 'tokens' } })) {
      kinds.push(m.type);
      if (m.type === 'result') result = m.result;
      if (m.type === 'error') throw m.error;
    }
    return { first: kinds[0], last: kinds.at(-1), content: result?.content };
  };
  const results = await Promise.all(Object.values(modes).map(run));
  const [want, ...got] = results;
  assert.equal(want.first, 'taskCreated');
  assert.equal(want.last, 'result');
  for (const [i, [name]] of proxied().entries()) assert.deepEqual(got[i], want, name);
});

// server-filesystem started without directories takes them from the
// client's roots: through `proxy --listen`, each client's own roots reach
// its own upstream, which reads there and denies the other's.
test('--listen in front of server-filesystem: each client reads within its own roots', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dirA = mkdtempSync(path.join(tmpdir(), 'ctxfit-roots-a-'));
  const dirB = mkdtempSync(path.join(tmpdir(), 'ctxfit-roots-b-'));
  writeFileSync(path.join(dirA, 'a.txt'), 'in a');
  writeFileSync(path.join(dirB, 'b.txt'), 'in b');
  const filesystem = path.join(here, 'node_modules', '.bin', 'mcp-server-filesystem');
  const url = await start(ctxfit, ['proxy', '--listen', '127.0.0.1:0', '--', filesystem], {},
    (s) => s.match(/"url":"(http:\/\/[^"]+)"/)?.[1]);
  const a = await http(url, () => [{ uri: `file://${dirA}`, name: 'a' }]);
  const b = await http(url, () => [{ uri: `file://${dirB}`, name: 'b' }]);
  try {
    const read = async (c, file) => {
      // The upstream asks for the roots after initialization: give it a moment.
      for (let i = 0; ; i++) {
        const res = await c.callTool({ name: 'read_text_file', arguments: { path: file } });
        if (!res.isError || i === 100) return res;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const ra = await read(a, path.join(dirA, 'a.txt'));
    assert.ok(!ra.isError, JSON.stringify(ra.content));
    assert.equal(ra.content[0].text, 'in a');
    const rb = await read(b, path.join(dirB, 'b.txt'));
    assert.ok(!rb.isError, JSON.stringify(rb.content));
    assert.equal(rb.content[0].text, 'in b');
    const denied = await a.callTool({ name: 'read_text_file', arguments: { path: path.join(dirB, 'b.txt') } });
    assert.ok(denied.isError, 'a client cannot read in another client\'s roots');
  } finally {
    await Promise.allSettled([a.close(), b.close()]);
  }
});

// server-memory behind `proxy --listen`: what one client writes, it reads
// back through the proxy as it would directly.
test('--listen in front of server-memory: entities written and read back', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const memory = path.join(here, 'node_modules', '.bin', 'mcp-server-memory');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ctxfit-memory-')), 'memory.jsonl');
  const url = await start(ctxfit, ['proxy', '--listen', '127.0.0.1:0', '--pass-env', 'MEMORY_FILE_PATH', '--', memory],
    { MEMORY_FILE_PATH: file }, (s) => s.match(/"url":"(http:\/\/[^"]+)"/)?.[1]);
  const c = await http(url, rootsA);
  try {
    const created = await c.callTool({ name: 'create_entities',
      arguments: { entities: [{ name: 'ctxfit', entityType: 'library', observations: ['keeps results within the budget'] }] } });
    assert.ok(!created.isError, JSON.stringify(created.content));
    const graph = await c.callTool({ name: 'read_graph', arguments: {} });
    assert.ok(!graph.isError, JSON.stringify(graph.content));
    assert.deepEqual(graph.structuredContent.entities.map((e) => e.name), ['ctxfit']);
  } finally {
    await c.close();
  }
});
