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
// Then the same in front of a third-party mock server: Stoplight Prism
// (`prism mock`, pinned in package.json) serving a document written here
// that exercises path, query and header parameters, an API key, request
// bodies, nested objects, arrays, enums, oneOf and a large list. Prism
// answers 422 to any request that does not match the document, so a
// successful call shows the gateway sent the right method, path, query,
// headers and body.
//
// e2e/gateway_test.go runs this file with the path of the ctxfit binary in
// CTXFIT_E2E_CTXFIT and the document's URL in CTXFIT_E2E_OPENAPI_URL.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { createServer as createHTTPServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { body, rebuild } from './follow.mjs';

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

async function connect(args, document = openapi) {
  const transport = new StdioClientTransport({
    command: ctxfit,
    // Every operation listed: these tests are about documents; the budgeted
    // catalog has its own (catalog.test.mjs).
    args: ['gateway', '--openapi', document, '--catalog-budget=-1', ...args],
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
  return res.content.filter((c) => !(c.type === 'resource_link' && c._meta?.['dev.ctxfit/original'])).map((c) => {
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
    assert.equal(first._meta?.['dev.ctxfit/strategy'], 'pagination');
    const page = JSON.parse(await rebuild(body(first), async (cursor, part) => {
      const res = await s.client.callTool({ name: NEXT, arguments: part ? { cursor, part } : { cursor } });
      assert.ok(!res.isError, texts(res).join(' '));
      assert.ok(res._meta?.['dev.ctxfit/tokens'] <= HARD_CAP, 'within the hard cap');
      return body(res);
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
    assert.equal(res._meta['dev.ctxfit/error'].data.status, 404);
  });
});

// The mock's document: a shop whose list of items is large (400 items of
// about 40 tokens each), given as the response's example so that Prism
// answers it as it is.
const bigList = Array.from({ length: 400 }, (_, i) => ({
  id: i + 1,
  name: `Item number ${i + 1} of the mock shop`,
  category: ['tools', 'garden', 'kitchen'][i % 3],
  price: { amount: 10 + i, currency: 'EUR' },
  tags: ['mock', `t${i % 7}`],
}));
const item = { id: 7, name: 'Hammer', category: 'tools', price: { amount: 12.5, currency: 'EUR' }, tags: ['steel'], dimensions: { width: 3, height: 30 } };
const mockDocument = {
  openapi: '3.1.0',
  info: { title: 'Mock shop', version: '1.0.0' },
  components: {
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    schemas: {
      Category: { type: 'string', enum: ['tools', 'garden', 'kitchen'] },
      Money: { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'number' }, currency: { type: 'string', enum: ['EUR', 'USD'] } } },
      Item: {
        type: 'object',
        required: ['id', 'name', 'category', 'price'],
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          category: { $ref: '#/components/schemas/Category' },
          price: { $ref: '#/components/schemas/Money' },
          tags: { type: 'array', items: { type: 'string' } },
          dimensions: { type: 'object', properties: { width: { type: 'number' }, height: { type: 'number' } } },
        },
      },
      NewItem: {
        type: 'object',
        required: ['name', 'category', 'price', 'payment'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          category: { $ref: '#/components/schemas/Category' },
          price: { $ref: '#/components/schemas/Money' },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
          payment: {
            oneOf: [
              { type: 'object', required: ['card'], properties: { card: { type: 'string', pattern: '^[0-9]{16}$' } }, additionalProperties: false },
              { type: 'object', required: ['iban'], properties: { iban: { type: 'string' } }, additionalProperties: false },
            ],
          },
        },
      },
    },
  },
  security: [{ apiKey: [] }],
  paths: {
    '/items': {
      get: {
        operationId: 'listItems',
        summary: 'List the items',
        parameters: [
          { name: 'category', in: 'query', schema: { $ref: '#/components/schemas/Category' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
          { name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } },
        ],
        responses: {
          200: { description: 'The items.', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } }, example: bigList } } },
        },
      },
      post: {
        operationId: 'createItem',
        summary: 'Create an item',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NewItem' } } } },
        responses: {
          201: { description: 'Created.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' }, example: item } } },
        },
      },
    },
    '/items/{itemId}': {
      get: {
        operationId: 'getItem',
        summary: 'Get an item',
        parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          200: { description: 'The item.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' }, example: item } } },
        },
      },
      delete: {
        operationId: 'deleteItem',
        summary: 'Delete an item',
        parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 204: { description: 'Deleted.' } },
      },
    },
  },
};

// freePort returns a port of 127.0.0.1 that was free a moment ago.
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// startPrism runs `prism mock document` on a free port of 127.0.0.1 and
// resolves once it listens (within a minute), to { port, log(), kill() }:
// log() is everything Prism has printed so far.
async function startPrism(document) {
  const port = await freePort();
  const proc = spawn(join('node_modules', '.bin', 'prism'), ['mock', document, '-h', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, SCARF_ANALYTICS: 'false' },
  });
  let log = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start:\n${log}`)), 60_000);
    const read = (d) => {
      log += d;
      if (log.includes('Prism is listening')) { clearTimeout(timer); resolve(); }
    };
    proc.stdout.on('data', read);
    proc.stderr.on('data', read);
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`prism exited ${code}:\n${log}`)); });
  });
  proc.removeAllListeners('exit');
  return { port, log: () => log, kill: () => proc.kill() };
}

describe('ctxfit gateway in front of a Prism mock server', () => {
  let dir, prism, s;
  const prismLog = () => prism?.log() ?? '';
  const received = (path) => prismLog().split('\n').filter((l) => l.includes(`${path} `) && l.includes('Request received')).length;
  // seen waits until Prism has logged n requests for path: its log reaches this process some time after the
  // answer does, so a count read right after a call can be short on a loaded machine. Prism logs requests in
  // the order it receives them, so once a later marker request is seen, every earlier one has been too.
  const seen = async (path, n) => {
    const deadline = Date.now() + 60_000;
    while (received(path) < n) {
      if (Date.now() > deadline) throw new Error(`Prism logged ${received(path)} requests for ${path}, want ${n}:\n${prismLog()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // marker calls getItem for an id no other test asks for and waits for Prism to log it.
  let markers = 100;
  const marker = async () => {
    const id = markers++;
    const res = await s.client.callTool({ name: 'getItem', arguments: { itemId: id } });
    assert.ok(!res.isError, texts(res).join(' '));
    await seen(`/items/${id}`, 1);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxfit-gateway-prism-'));
    const doc = join(dir, 'shop.json');
    writeFileSync(doc, JSON.stringify(mockDocument));
    prism = await startPrism(doc);
    const { port } = prism;
    s = await connect(['--base-url', `http://127.0.0.1:${port}`, '--header', 'X-API-Key:k3y', '--threshold', '1000', '--hard-cap', String(HARD_CAP)], doc);
  });
  after(async () => {
    await s?.client.close();
    prism?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('every operation is a tool whose schemas the client accepts', () => {
    const names = s.tools.map((t) => t.name);
    for (const op of ['listItems', 'createItem', 'getItem', 'deleteItem']) assert.ok(names.includes(op), `${op} in ${names}`);
    const create = s.tools.find((t) => t.name === 'createItem');
    assert.deepEqual(create.inputSchema.required, ['body']);
    assert.equal(create.inputSchema.properties.body.properties.payment.oneOf.length, 2);
    assert.deepEqual(create.inputSchema.properties.body.properties.category.enum, ['tools', 'garden', 'kitchen']);
    assert.ok(s.tools.find((t) => t.name === 'getItem').outputSchema, 'an object response is an output schema');
    assert.equal(s.tools.find((t) => t.name === 'deleteItem').annotations.destructiveHint, true);
  });

  test('a large list is shaped within the hard cap and rebuilt whole', async () => {
    const first = await s.client.callTool({ name: 'listItems', arguments: { category: 'tools', limit: 500, 'X-Tenant': 'acme' } });
    assert.ok(!first.isError, texts(first).join(' '));
    assert.equal(first._meta?.['dev.ctxfit/strategy'], 'pagination');
    const whole = await rebuild(body(first), async (cursor, part) => {
      const res = await s.client.callTool({ name: NEXT, arguments: part ? { cursor, part } : { cursor } });
      assert.ok(!res.isError, texts(res).join(' '));
      assert.ok(res._meta?.['dev.ctxfit/tokens'] <= HARD_CAP, 'within the hard cap');
      return body(res);
    });
    assert.deepEqual(JSON.parse(whole), bigList);
  });

  test('a path parameter and an object answer: structured content that validates, then served from the cache', async () => {
    const res = await s.client.callTool({ name: 'getItem', arguments: { itemId: 7 } });
    assert.ok(!res.isError, texts(res).join(' '));
    assert.deepEqual(res.structuredContent, item);
    await seen('/items/7', 1);
    const again = await s.client.callTool({ name: 'getItem', arguments: { itemId: 7 } });
    assert.deepEqual(again.structuredContent, item);
    await marker();
    assert.equal(received('/items/7'), 1, 'a cached GET is not fetched again');
  });

  test('a request body with nested objects, arrays, an enum and a oneOf reaches the API as the document says', async () => {
    const body = { name: 'Rake', category: 'garden', price: { amount: 20, currency: 'USD' }, tags: ['a', 'b'], payment: { card: '4111111111111111' } };
    const res = await s.client.callTool({ name: 'createItem', arguments: { body } });
    assert.ok(!res.isError, texts(res).join(' '));
    assert.deepEqual(res.structuredContent, item);
  });

  test('a DELETE answering 204 says so', async () => {
    const res = await s.client.callTool({ name: 'deleteItem', arguments: { itemId: 3 } });
    assert.ok(!res.isError, texts(res).join(' '));
    assert.match(texts(res)[0], /answered 204 No Content with no content/);
  });

  test('invalid arguments never reach the API', async () => {
    const cases = [
      [{ name: 'listItems', arguments: { category: 'toys', 'X-Tenant': 'acme' } }, 'category', /one of "tools", "garden", "kitchen"/],
      [{ name: 'listItems', arguments: { category: 'tools' } }, 'X-Tenant', /required/],
      [{ name: 'getItem', arguments: { itemId: 0 } }, 'itemId', /at least 1/],
      [{ name: 'createItem', arguments: { body: { name: 'Rake', category: 'garden', price: { amount: 1, currency: 'EUR' }, payment: { card: '12' } } } }, 'body/payment', null],
    ];
    await marker();
    const before = received('/items');
    for (const [call, parameter, expected] of cases) {
      const res = await s.client.callTool(call);
      assert.equal(res.isError, true, JSON.stringify(call));
      const e = res._meta['dev.ctxfit/error'];
      assert.equal(e.code, 'parameter_invalid');
      assert.ok(e.data.parameter.startsWith(parameter), `${e.data.parameter} starts with ${parameter}`);
      if (expected) assert.match(e.data.expected, expected);
      assert.ok(e.data.suggestion);
    }
    await marker();
    assert.equal(received('/items'), before);
  });
});

// A mock of GitHub's REST API (api.github.com's document from
// @octokit/openapi, pinned in package.json) answering from the document's
// own examples: Prism takes about a minute to read GitHub's document, so
// this small server stands in for it. A list of issues is the example
// repeated with new numbers, large enough to be shaped.
const githubDocument = join('node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');

function startServer(handler) {
  return new Promise((resolve) => {
    const srv = createHTTPServer(handler);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

describe('ctxfit gateway in front of a mock of GitHub\'s API, from its real document', () => {
  let api, s, issues, issue;
  before(async () => {
    const doc = JSON.parse(readFileSync(githubDocument, 'utf8'));
    const example = doc.components.examples['issue-items'].value[0];
    issues = Array.from({ length: 120 }, (_, i) => ({ ...example, id: 1000 + i, number: i + 1, title: `Issue ${i + 1}` }));
    issue = doc.components.examples.issue.value;
    api = await startServer((req, res) => {
      const body = req.url.startsWith('/repos/octo/hello/issues/1') ? issue
        : req.url.startsWith('/repos/octo/hello/issues') ? issues : null;
      res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body ?? { message: 'Not Found' }));
    });
    // The issues tag (about 50 operations): the client compiles every output schema it lists, which takes it
    // a minute and more for all of GitHub's; e2e/gateway_test.go lists them all with the Go client.
    s = await connect(['--base-url', `http://127.0.0.1:${api.address().port}`, '--include', 'issues,orgs/list-attestations',
      '--threshold', '1000', '--hard-cap', String(HARD_CAP)], githubDocument);
  });
  after(async () => {
    await s?.client.close();
    api?.close();
  });

  test('initialize and tools/list are answered: every operation is a tool whose schemas the client accepts', () => {
    assert.ok(s.tools.length > 20, `${s.tools.length} tools`);
    const names = s.tools.map((t) => t.name);
    for (const name of ['issues_list-for-repo', 'issues_get', 'orgs_list-attestations']) assert.ok(names.includes(name), name);
  });

  test('a large list of issues is shaped within the hard cap and rebuilt byte for byte', async () => {
    const first = await s.client.callTool({ name: 'issues_list-for-repo', arguments: { owner: 'octo', repo: 'hello', state: 'open', per_page: 100 } });
    assert.ok(!first.isError, texts(first).join(' '));
    assert.ok(first._meta?.['dev.ctxfit/tokens'] <= HARD_CAP, 'within the hard cap');
    const whole = await rebuild(texts(first)[0], async (cursor, part) => {
      const res = await s.client.callTool({ name: NEXT, arguments: part ? { cursor, part } : { cursor } });
      assert.ok(!res.isError, texts(res).join(' '));
      assert.ok(res._meta?.['dev.ctxfit/tokens'] <= HARD_CAP, 'within the hard cap');
      return texts(res)[0];
    });
    assert.equal(whole, JSON.stringify(issues));
  });

  test('an object answer reaches the client whether or not it keeps to its schema', async () => {
    const res = await s.client.callTool({ name: 'issues_get', arguments: { owner: 'octo', repo: 'hello', issue_number: 1 } });
    assert.ok(!res.isError, texts(res).join(' '));
    assert.ok(res.structuredContent, 'structured content the advertised schema admits');
  });
});

// Swagger 2.0: the sample Petstore (gateway/testdata), converted by the
// gateway, behind a Prism mock of the same document.
describe('ctxfit gateway in front of a Prism mock of a Swagger 2.0 document', () => {
  const doc = join('..', '..', 'gateway', 'testdata', 'petstore-swagger2.json');
  let prism, s;
  before(async () => {
    prism = await startPrism(doc);
    const { port } = prism;
    s = await connect(['--base-url', `http://127.0.0.1:${port}`], doc); // Prism serves the paths without basePath
  });
  after(async () => {
    await s?.client.close();
    prism?.kill();
  });

  test('its operations are tools, and calls reach the API as the document says', async () => {
    const names = s.tools.map((t) => t.name);
    for (const op of ['addPet', 'findPetsByStatus', 'getPetById', 'updatePetWithForm']) assert.ok(names.includes(op), `${op} in ${names}`);
    const pet = await s.client.callTool({ name: 'getPetById', arguments: { petId: 7 } });
    assert.ok(!pet.isError, texts(pet).join(' '));
    assert.equal(typeof pet.structuredContent.name, 'string');
    const found = await s.client.callTool({ name: 'findPetsByStatus', arguments: { status: ['available', 'sold'] } });
    assert.ok(!found.isError, texts(found).join(' '));
    const added = await s.client.callTool({ name: 'addPet', arguments: { body: { name: 'rex', photoUrls: [] } } });
    assert.ok(!added.isError, texts(added).join(' '));
    const form = await s.client.callTool({ name: 'updatePetWithForm', arguments: { petId: 7, body: { name: 'rex' } } });
    assert.ok(!form.isError || /answered 405/.test(texts(form).join(' ')), texts(form).join(' '));
  });
});
