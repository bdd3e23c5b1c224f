// The official openai client drives examples/agent with two scripted
// providers (a, the default, and b; openaifit/openaifittest) and the npm
// server-filesystem over stdio, streaming and not, while the Go side
// (e2e/agent_test.go) makes the providers fail and kills the MCP server
// through a control endpoint this file calls:
//
//   POST CONTROL/fail?provider=a&status=503&retry_after=60&hang=1&mid_stream=1&times=1
//   POST CONTROL/hold?provider=a     (its next streamed answer stops after its first delta)
//   POST CONTROL/release?provider=a  (204: the answer was held there; 409: none was)
//   GET  CONTROL/last?provider=a     (the messages of its last request)
//   POST CONTROL/kill   (kills the MCP server's process)
//
// Environment: CTXFIT_E2E_AGENT_URL, CTXFIT_E2E_CONTROL_URL, CTXFIT_E2E_FIXTURES.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const baseURL = need('CTXFIT_E2E_AGENT_URL');
const control = need('CTXFIT_E2E_CONTROL_URL');
const fixtures = need('CTXFIT_E2E_FIXTURES');
const reports = readdirSync(path.join(fixtures, 'many')).sort().map((f) => path.join(fixtures, 'many', f));
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0 });

const fail = async (params) => {
  const res = await fetch(`${control}/fail?${new URLSearchParams(params)}`, { method: 'POST' });
  assert.equal(res.status, 204, await res.text());
};
const hold = async (provider) => {
  const res = await fetch(`${control}/hold?provider=${provider}`, { method: 'POST' });
  assert.equal(res.status, 204, await res.text());
};
// release lets the held stream go on, and returns the control's answer.
const release = async (provider) => {
  const res = await fetch(`${control}/release?provider=${provider}`, { method: 'POST' });
  return { status: res.status, text: await res.text() };
};
const last = async (provider) => {
  const res = await fetch(`${control}/last?provider=${provider}`);
  assert.equal(res.status, 200);
  return res.json();
};
const kill = async () => {
  const res = await fetch(`${control}/kill`, { method: 'POST' });
  assert.equal(res.status, 204, await res.text());
};
const read = (i) => ({ model: 'scripted', messages: [{ role: 'user', content: `read ${reports[i]}` }] });

test('/v1/models lists both providers, the default first', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['scripted', 'a', 'b']);
});

test('a file read, not streamed: the answer with the seed\'s fields and the tool call\'s record', async () => {
  const data = await client.chat.completions.create(read(0));
  assert.equal(data.choices[0].message.content, 'Done: I read it.');
  assert.equal(data.provider_used, 'a');
  assert.ok(Number.isInteger(data.duration_ms));
  assert.equal(data.tool_calls.length, 1);
  const rec = data.tool_calls[0];
  assert.equal(rec.tool_name, 'read_text_file');
  assert.equal(rec.status, 'success');
  assert.match(rec.id, /^call_/);
  assert.ok(Date.parse(rec.started_at) <= Date.parse(rec.completed_at));
});

test('the stream helper: content, the tool call\'s delta, and the final completion', async () => {
  const stream = client.chat.completions.stream({ ...read(1), stream_options: { include_usage: true } });
  let content = '';
  const calls = [];
  stream.on('content', (delta) => { content += delta; });
  stream.on('tool_calls.function.arguments.done', (e) => { calls.push(e.name); });
  const final = await stream.finalChatCompletion();
  assert.equal(content, 'Done: I read it.');
  assert.deepEqual(calls, ['read_text_file']);
  assert.equal(final.choices[0].finish_reason, 'stop');
  assert.equal(final.choices[0].message.content, 'Done: I read it.');
  assert.equal(final.choices[0].message.tool_calls[0].function.name, 'read_text_file');
  assert.ok(final.usage.prompt_tokens > 0);
});

test('create with stream: true yields chat.completion.chunk objects', async () => {
  const stream = await client.chat.completions.create({ ...read(2), stream: true });
  let content = '';
  let finish = null;
  let provider = '';
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const c of chunk.choices) {
      content += c.delta?.content ?? '';
      finish = c.finish_reason ?? finish;
    }
    provider = chunk.provider_used ?? provider;
  }
  assert.equal(content, 'Done: I read it.');
  assert.equal(finish, 'stop');
  assert.equal(provider, 'a');
});

test('streamed from the provider: the first delta arrives while the provider\'s turn has not ended', async () => {
  await hold('a');
  let released = null;
  try {
    const stream = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }], stream: true });
    let content = '';
    for await (const chunk of stream) {
      for (const c of chunk.choices) content += c.delta?.content ?? '';
      if (released === null && content !== '') {
        assert.notEqual(content, 'Hello! Ask me to read something.', 'only the first delta while the provider holds its turn');
        released = await release('a');
        assert.equal(released.status, 204, released.text);
      }
    }
    assert.equal(content, 'Hello! Ask me to read something.');
  } finally {
    if (released === null) await release('a');
  }
});

test('tool calls between streamed turns: the call\'s deltas as the provider streams them, the tool run, the next turn', async () => {
  await hold('a');
  let released = null;
  let early = null;
  const stream = client.chat.completions.stream(read(6));
  stream.on('chunk', (chunk, snapshot) => {
    if (released === null && chunk.choices[0]?.delta?.tool_calls) {
      const { function: fn } = snapshot.choices[0].message.tool_calls[0];
      early = { name: fn.name, arguments: fn.arguments }; // the snapshot goes on growing
      released = release('a');
    }
  });
  const args = [];
  stream.on('tool_calls.function.arguments.done', (e) => { args.push(e.parsed_arguments ?? JSON.parse(e.arguments)); });
  let final;
  try {
    final = await stream.finalChatCompletion();
  } finally {
    if (released === null) await release('a');
  }
  const r = await released;
  assert.equal(r.status, 204, r.text);
  assert.equal(early.name, 'read_text_file');
  assert.notEqual(early.arguments, JSON.stringify({ path: reports[6] }), 'the arguments came after the call\'s first delta');
  assert.deepEqual(args, [{ path: reports[6] }], 'the pieces of the arguments add up');
  assert.equal(final.choices[0].message.content, 'Done: I read it.');
  assert.equal(final.tool_calls[0].status, 'success');
});

test('a provider failing mid-stream: the stream ends with an error the client throws, after the delta that came', async () => {
  await fail({ provider: 'a', status: '500', mid_stream: '1' });
  const stream = client.chat.completions.stream({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
  let content = '';
  stream.on('content', (delta) => { content += delta; });
  await assert.rejects(stream.finalChatCompletion(), (err) => {
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.match(err.message, /the stream of the provider a broke/, 'neither retried nor handed to b');
    return true;
  });
  assert.equal(content, 'Hello! ');
});

test('a provider\'s 500 and a time-out are retried at the same provider', async () => {
  await fail({ provider: 'a', status: '500' });
  let data = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
  assert.match(data.choices[0].message.content, /^Hello/);
  assert.equal(data.provider_used, 'a');
  await fail({ provider: 'a', hang: '1' });
  data = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
  assert.equal(data.provider_used, 'a');
});

test('a provider that keeps failing falls back to the next, streamed too', async () => {
  await fail({ provider: 'a', status: '503', times: '3' });
  const stream = client.chat.completions.stream({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
  const final = await stream.finalChatCompletion();
  assert.match(final.choices[0].message.content, /^Hello/);
  assert.equal(final.provider_used, 'b');
});

test('X-Provider picks b', async () => {
  const data = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] }, { headers: { 'X-Provider': 'b' } });
  assert.equal(data.provider_used, 'b');
});

test('429s with a Retry-After past the request\'s deadline (2 minutes): the client gets 429 with its Retry-After', async () => {
  await fail({ provider: 'a', status: '429', retry_after: '3600' });
  await fail({ provider: 'b', status: '429', retry_after: '600' });
  await assert.rejects(
    client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] }),
    (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.equal(err.headers.get('retry-after'), '600', 'the shortest wait the providers gave');
      return true;
    },
  );
});

test('the MCP server killed mid-session: the next read reconnects and succeeds', async () => {
  const { data, response } = await client.chat.completions.create(read(3)).withResponse();
  assert.equal(data.tool_calls[0].status, 'success');
  const session = response.headers.get('x-session-id');
  await kill();
  const again = await client.chat.completions.create(read(4), { headers: { 'X-Session-ID': session } });
  assert.equal(again.choices[0].message.content, 'Done: I read it.');
  assert.equal(again.tool_calls[0].status, 'success', JSON.stringify(again.tool_calls[0]));
  const streamed = client.chat.completions.stream(read(5), { headers: { 'X-Session-ID': session } });
  const final = await streamed.finalChatCompletion();
  assert.equal(final.choices[0].message.content, 'Done: I read it.');
});

test('the provider field of the body picks b, and the session keeps the preference', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'scripted', provider: 'b', messages: [{ role: 'user', content: 'hello' }] })
    .withResponse();
  assert.equal(data.provider_used, 'b');
  const again = await client.chat.completions.create(
    { model: 'scripted', messages: [{ role: 'user', content: 'hello again' }] },
    { headers: { 'X-Session-ID': response.headers.get('x-session-id') } },
  );
  assert.equal(again.provider_used, 'b', 'the session\'s preference');
});

test('a history resent with X-Session-ID is not added twice', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] })
    .withResponse();
  const messages = [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: data.choices[0].message.content },
    { role: 'user', content: 'and now?' },
  ];
  const stream = client.chat.completions.stream({ model: 'scripted', messages }, { headers: { 'X-Session-ID': response.headers.get('x-session-id') } });
  await stream.finalChatCompletion();
  const got = await last('a');
  assert.deepEqual(got.map((m) => `${m.role}: ${m.content}`), messages.map((m) => `${m.role}: ${m.content}`), '3 messages sent, 3 reach the provider');
});

test('arguments that do not match the tool\'s input schema are not sent: the model reads INVALID_ARGUMENTS', async () => {
  const data = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'read with a wrong argument' }] });
  assert.equal(data.tool_calls.length, 1);
  assert.equal(data.tool_calls[0].status, 'failure');
  assert.match(data.tool_calls[0].error ?? '', /INVALID_ARGUMENTS/, JSON.stringify(data.tool_calls[0]));
  const got = await last('a');
  const result = got.findLast((m) => m.role === 'tool');
  assert.match(result.content, /INVALID_ARGUMENTS: the arguments of read_text_file do not match its input schema/);
  assert.match(result.content, /Call read_text_file again with arguments that match/);
});

test('turns the session\'s 20 messages drop leave a placeholder the model can read them back from', async () => {
  let session;
  for (let i = 0; i < 11; i++) {
    const headers = session ? { 'X-Session-ID': session } : {};
    const { response } = await client.chat.completions
      .create({ model: 'scripted', messages: [{ role: 'user', content: `message ${i}` }] }, { headers })
      .withResponse();
    session = response.headers.get('x-session-id');
  }
  const got = await last('a');
  assert.ok(got.length <= 20, `${got.length} messages`);
  assert.equal(got[0].role, 'system');
  assert.match(got[0].content, /^\[ctxfit\] Earlier messages of this conversation \(\d+ messages, \d+ tokens\) were dropped/);
  assert.match(got[0].content, /To read them again call ctxfit_next with \{"cursor":"[^"]+"\}\.$/);
  assert.ok(!got.some((m) => m.content === 'message 0'), 'message 0 was dropped');
});
