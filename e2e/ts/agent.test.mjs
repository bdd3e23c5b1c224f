// The official openai client drives examples/agent, an OpenAI-compatible
// chat endpoint backed by MCP servers (here server-filesystem), whose
// provider is a scripted one the Go test runs (openaifit/openaifittest): it asks
// for a file read per user message, and recalls with ctxfit_next every tool
// result the agent cleared from the conversation. This side checks what a
// client of the endpoint sees: answers, sessions, the middleware's fitting
// of a long history it sends, the rate limit and OpenAI-style errors. The
// Go side (e2e/agent_test.go) checks what the provider got: every request
// within the budget, every cleared result recalled byte for byte.
//
// e2e/agent_test.go runs this file with CTXFIT_E2E_AGENT_URL (the agent's
// base URL) and CTXFIT_E2E_FIXTURES (the directory the filesystem server
// reads).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const baseURL = need('CTXFIT_E2E_AGENT_URL');
const fixtures = need('CTXFIT_E2E_FIXTURES');
const reports = readdirSync(path.join(fixtures, 'many')).sort().map((f) => path.join(fixtures, 'many', f));

// Each client has its own rate-limit bucket, keyed by X-Client-ID.
const client = (id) => new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, defaultHeaders: { 'X-Client-ID': id } });
const driver = client('driver');

test('a session of seven turns, each reading a large file: answers, and one session throughout', async () => {
  let session = '';
  for (let i = 0; i < 7; i++) {
    const headers = session ? { 'X-Session-ID': session } : {};
    const { data, response } = await driver.chat.completions
      .create({ model: 'scripted', messages: [{ role: 'user', content: `read ${reports[i]}` }] }, { headers })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].message.role, 'assistant');
    assert.equal(data.choices[0].message.content, 'Done: I read it.');
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.ok(data.usage.prompt_tokens > 0, 'the provider\'s usage, summed');
    const got = response.headers.get('x-session-id');
    if (session === '') session = got;
    assert.equal(got, session, 'the same session');
  }
});

test('a long history sent at once is fitted by the middleware before the agent reads it', async () => {
  // 18 messages (within a session's 20), with four tool results of about
  // 3,600 tokens each: over the agent's window of 7,000 less 1,000 for the
  // reply.
  const messages = [{ role: 'system', content: 'You read files.' }];
  for (let i = 0; i < 4; i++) {
    const id = `call_history_${i}`;
    const files = reports.slice(3 * i, 3 * i + 3);
    messages.push(
      { role: 'user', content: `read ${files.join(' and ')}` },
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_multiple_files', arguments: JSON.stringify({ paths: files }) } }] },
      { role: 'tool', tool_call_id: id, content: files.map((f) => readFileSync(f, 'utf8')).join('\n---\n') },
      { role: 'assistant', content: 'Done: I read them.' },
    );
  }
  messages.push({ role: 'user', content: 'hello' });
  const { data, response } = await driver.chat.completions.create({ model: 'scripted', messages }).withResponse();
  assert.match(data.choices[0].message.content, /^Hello/);
  const before = Number(response.headers.get('x-ctxfit-tokens-before'));
  const after = Number(response.headers.get('x-ctxfit-tokens-after'));
  assert.ok(before > 6000 && after <= 6000, `fitted: ${before} -> ${after} tokens`);
  assert.ok(Number(response.headers.get('x-ctxfit-results-cleared')) > 0, 'old tool results cleared behind placeholders');
  assert.equal(response.headers.get('x-ctxfit-messages-dropped'), '0', 'clearing was enough: no turn dropped');
});

test('an unknown session is a 404 the client reads as an OpenAI error', async () => {
  await assert.rejects(
    driver.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] }, { headers: { 'X-Session-ID': 'sess_none' } }),
    (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'session_not_found');
      assert.equal(err.type, 'invalid_request_error');
      return true;
    },
  );
});

test('a client gets 10 requests, then 429 with Retry-After and an OpenAI-style error', async () => {
  const flood = client('flood');
  for (let i = 0; i < 10; i++) {
    const res = await flood.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
    assert.match(res.choices[0].message.content, /^Hello/, `request ${i + 1}`);
  }
  await assert.rejects(
    flood.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] }),
    (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.equal(err.code, 'rate_limit_exceeded');
      assert.equal(err.type, 'requests');
      assert.ok(Number(err.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
      return true;
    },
  );
});
