// ctxfit's TOON encoder and decoder (the Go package toon) against the
// reference implementation, @toon-format/toon 2.3.1 (spec v3.3, the version
// ctxfit targets), and its spec v4 release 4.4.0 (@toon-format/toon-v4).
//
// e2e/toon_test.go runs this file with CTXFIT_E2E_TOON_CASES, a JSON file of
// cases generated in Go: {name, json, toon, delimiter, indent}, where toon is
// what ctxfit's Encode wrote for json. For each case it checks that both
// reference decoders read ctxfit's TOON as JSON.parse reads the JSON (same
// values, keys in the same order), and writes the reference encoder's TOON
// of the same value to CTXFIT_E2E_TOON_OUT, with the value as JSON.parse
// read it, for the Go side to decode with ctxfit's Decode.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { encode, decode } from '@toon-format/toon';
import { decode as decodeV4 } from '@toon-format/toon-v4';

const need = (name) => {
  const v = process.env[name] ?? '';
  if (v === '') throw new Error(`${name} is not set: run these tests through go test ./e2e/`);
  return v;
};
const cases = JSON.parse(readFileSync(need('CTXFIT_E2E_TOON_CASES'), 'utf8'));
const out = need('CTXFIT_E2E_TOON_OUT');

const results = [];
after(() => writeFileSync(out, JSON.stringify(results)));

for (const c of cases) {
  test(c.name, () => {
    const value = JSON.parse(c.json);
    const want = JSON.stringify(value);
    const opts = { indent: c.indent, strict: true };
    assert.equal(JSON.stringify(decode(c.toon, opts)), want, 'the reference decoder (v3) reads ctxfit\'s TOON as the JSON');
    assert.equal(JSON.stringify(decodeV4(c.toon, opts)), want, 'the reference decoder (v4) reads ctxfit\'s TOON as the JSON');
    results.push({ name: c.name, parsed: want, toon: encode(value, { delimiter: c.delimiter, indent: c.indent }) });
  });
}
