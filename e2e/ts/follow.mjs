// follow.mjs rebuilds the original of a shaped result, as a client that
// wants everything would: it follows every nextCursor and opens every part
// ({"ctxfit:part":N,...}), and puts the original text back together from
// the raw text of the shaped bodies (items, members and string chunks are
// the original's characters; lead and tail give back the white space), so
// the result can be compared character for character with what the server
// sent. It is the JavaScript twin of internal/testing/follow.

// valueEnd returns the index just past the JSON value that starts at i.
export function valueEnd(s, i) {
  const stack = [];
  for (;;) {
    const c = s[i];
    if (c === '{' || c === '[') {
      stack.push(c);
      i = space(s, i + 1);
      if (s[i] === (c === '{' ? '}' : ']')) { stack.pop(); i++; } else {
        if (c === '{') i = space(s, space(s, stringEnd(s, i)) + 1); // the first key and its colon
        continue;
      }
    } else if (c === '"') {
      i = stringEnd(s, i);
    } else {
      const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(s.slice(i, i + 4096));
      if (!m) throw new Error(`follow: no JSON value at ${i}: ${s.slice(i, i + 40)}`);
      i += m[0].length;
    }
    for (;;) {
      if (stack.length === 0) return i;
      i = space(s, i);
      const top = stack[stack.length - 1];
      if (s[i] === (top === '{' ? '}' : ']')) { stack.pop(); i++; continue; }
      if (s[i] !== ',') throw new Error(`follow: bad JSON at ${i}`);
      i = space(s, i + 1);
      if (top === '{') i = space(s, space(s, stringEnd(s, i)) + 1);
      break;
    }
  }
}

function stringEnd(s, i) {
  for (i++; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i + 1;
  }
  throw new Error('follow: unterminated string');
}

function space(s, i) {
  while (i < s.length && ' \t\n\r'.includes(s[i])) i++;
  return i;
}

// members returns the raw text of each top-level member's value of the
// JSON object text s.
export function members(s) {
  const out = {};
  let i = space(s, 0) + 1;
  for (;;) {
    i = space(s, i);
    if (s[i] === '}') return out;
    const kEnd = stringEnd(s, i);
    const key = JSON.parse(s.slice(i, kEnd));
    const v = space(s, space(s, kEnd) + 1);
    const end = valueEnd(s, v);
    out[key] = s.slice(v, end);
    i = space(s, end);
    if (s[i] === ',') i++;
  }
}

const placeholder = /^\{"ctxfit:part":(\d+)/;

// body returns the shaped body of a tool result (or of a resources/read
// result, whose first content is read the same way): the text of its first
// block, or, for a chunk of a text, which travels as text with its place in
// the block's _meta dev.ctxfit/chunk and its cursors in the result's _meta,
// the chunk envelope an HTTP response would hold, for rebuild.
export function body(res) {
  const first = (res.content ?? res.contents)[0];
  const chunk = first._meta?.['dev.ctxfit/chunk'];
  if (!chunk) return first.text;
  const { chunkIndex, totalChunks, ...metadata } = chunk;
  const env = { chunkIndex, totalChunks, nextCursor: res._meta?.['dev.ctxfit/nextCursor'] || null };
  if (res._meta?.['dev.ctxfit/partCursor']) env.partCursor = res._meta['dev.ctxfit/partCursor'];
  env.metadata = metadata;
  // The content first, as the engine writes it; a JSON string's body as written.
  const content = metadata.form === 'json-string' ? `"${first.text}"` : JSON.stringify(first.text);
  return `{"content":${content},${JSON.stringify(env).slice(1)}`;
}

// rebuild returns the original text of the result whose first shaped body
// is first; call(cursor, part) returns the shaped body of a continuation.
export async function rebuild(first, call) {
  return response(first, call);
}

async function response(body, call) {
  const raw = members(body);
  const env = JSON.parse(body);
  let whole;
  if (raw.items !== undefined || raw.members !== undefined) whole = await sequence(body, call);
  else if (raw.content !== undefined) whole = await text(body, call);
  else throw new Error(`follow: not a shaped page or chunk: ${body.slice(0, 200)}`);
  if (raw.outline === undefined) return whole;
  const meta = env.meta ?? env.metadata;
  return substitute(raw.outline, cursorOf(env), call, { [meta.part]: whole });
}

function cursorOf(env) {
  return env.nextCursor || env.partCursor || '';
}

async function sequence(body, call) {
  let out = '';
  for (let page = 0; ; page++) {
    const raw = members(body);
    const env = JSON.parse(body);
    const object = raw.members !== undefined;
    const region = (object ? raw.members : raw.items).slice(1, -1);
    let lead = page === 0 ? (object ? '{' : '[') : ',';
    if (env.meta.lead !== undefined) lead = env.meta.lead;
    if (region.trim() !== '' || page === 0) out += lead;
    if (region.trim() !== '') out += await substitute(region, cursorOf(env), call);
    if (!env.nextCursor) return out + (env.meta.tail ?? (object ? '}' : ']'));
    body = await call(env.nextCursor, 0);
  }
}

async function text(body, call) {
  let env = JSON.parse(body);
  const str = env.metadata.form === 'json-string';
  let out = str ? (env.metadata.lead ?? '"') : '';
  for (;;) {
    const raw = members(body);
    if (str) out += raw.content.slice(1, -1);
    else if (env.metadata.encoding) throw new Error(`follow: ${env.metadata.encoding} text: compare bytes in Go`);
    else out += env.content;
    if (!env.nextCursor) return out + (str ? (env.metadata.tail ?? '"') : '');
    body = await call(env.nextCursor, 0);
    env = JSON.parse(body);
  }
}

// substitute replaces every placeholder in raw JSON text (one value, or a
// region of elements or members) with the value it holds back.
async function substitute(raw, cursor, call, known = {}) {
  const spans = [];
  const walk = (i) => {
    const end = valueEnd(raw, i);
    if (raw[i] === '{') {
      const m = placeholder.exec(raw.slice(i, i + 40));
      if (m) { spans.push([i, end, Number(m[1])]); return end; }
      let j = space(raw, i + 1);
      while (raw[j] !== '}') {
        j = space(raw, space(raw, stringEnd(raw, j)) + 1);
        j = space(raw, walk(j));
        if (raw[j] === ',') j = space(raw, j + 1);
      }
    } else if (raw[i] === '[') {
      let j = space(raw, i + 1);
      while (raw[j] !== ']') {
        j = space(raw, walk(j));
        if (raw[j] === ',') j = space(raw, j + 1);
      }
    }
    return end;
  };
  let i = space(raw, 0);
  while (i < raw.length) {
    if (raw[i] === '"') {
      const e = stringEnd(raw, i);
      if (raw[space(raw, e)] === ':') i = space(raw, space(raw, e) + 1);
    }
    i = space(raw, walk(i));
    if (raw[i] === ',') i = space(raw, i + 1);
  }
  let out = '';
  let last = 0;
  for (const [start, end, part] of spans) {
    out += raw.slice(last, start);
    out += known[part] ?? (await response(await call(cursor, part), call));
    last = end;
  }
  return out + raw.slice(last);
}
