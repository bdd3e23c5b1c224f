// ctxfit's call viewer. Every value is written with textContent (calls carry
// text an attacker may have written); nothing is ever parsed as markup.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { calls: [], size: 500, filter: {}, token: sessionStorage.getItem('ctxfit-ui-token') || '', open: null, offset: 0, next: -1, stream: null };

  function headers() {
    return state.token ? { Authorization: 'Bearer ' + state.token } : {};
  }
  async function get(path) {
    const r = await fetch(path, { headers: headers(), credentials: 'same-origin', cache: 'no-store' });
    if (!r.ok) { const e = new Error((await r.text()).trim()); e.status = r.status; throw e; }
    return r.json();
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function query() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(state.filter)) if (v) q.set(k, v);
    return q.toString();
  }
  function matches(c) {
    const f = state.filter;
    return (!f.tool || c.tool.toLowerCase().includes(f.tool.toLowerCase())) &&
      (!f.strategy || c.strategy === f.strategy) && (!f.status || c.status === f.status) &&
      (!f.session || c.session === f.session);
  }
  function status(text) { $('live').textContent = text; }

  function row(c) {
    const tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.id = String(c.id);
    tr.setAttribute('aria-label', 'Call ' + c.id + ': ' + c.tool + ', ' + c.strategy + ', ' + c.tokensBefore + ' to ' + c.tokensAfter + ' tokens');
    const t = new Date(c.time);
    tr.append(el('td', isNaN(t) ? c.time : t.toLocaleTimeString()), el('td', c.session), el('td', c.tool),
      el('td', c.strategy, c.strategy !== 'passthrough' ? 'shaped' : ''), el('td', c.tokensBefore, 'n'),
      el('td', c.tokensAfter, 'n'), el('td', c.latencyMs.toFixed(1), 'n'),
      el('td', c.status, c.status !== 'success' ? 'bad' : ''));
    tr.addEventListener('click', () => open(c.id, tr));
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); open(c.id, tr); }
      else if (ev.key === 'ArrowDown' && tr.nextElementSibling) { ev.preventDefault(); tr.nextElementSibling.focus(); }
      else if (ev.key === 'ArrowUp' && tr.previousElementSibling) { ev.preventDefault(); tr.previousElementSibling.focus(); }
    });
    return tr;
  }

  function render() {
    const body = $('calls').tBodies[0];
    body.replaceChildren(...state.calls.slice().reverse().map(row));
    const tot = state.calls.reduce((a, c) => {
      a.calls++; if (c.strategy !== 'passthrough') a.shaped++;
      a.before += c.tokensBefore; a.after += c.tokensAfter; return a;
    }, { calls: 0, shaped: 0, before: 0, after: 0 });
    const dl = $('totals');
    dl.replaceChildren();
    for (const [k, v] of [['Calls', tot.calls], ['Shaped', tot.shaped], ['Tokens before', tot.before],
      ['Tokens after', tot.after], ['Tokens saved', tot.before - tot.after]]) {
      const d = el('div'); d.append(el('dt', k), el('dd', v)); dl.append(d);
    }
    chart();
  }

  // chart draws the cumulative tokens saved over time as an inline SVG.
  function chart() {
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', '0 0 720 140');
    svg.setAttribute('preserveAspectRatio', 'none');
    let sum = 0;
    const pts = state.calls.map((c) => { sum += c.tokensBefore - c.tokensAfter; return [Date.parse(c.time), sum]; });
    if (pts.length > 0) {
      const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
      const lo = Math.min(0, ...pts.map((p) => p[1])), hi = Math.max(1, ...pts.map((p) => p[1]));
      const line = document.createElementNS(NS, 'polyline');
      line.setAttribute('points', pts.map(([t, v]) =>
        (10 + 700 * (t - t0) / (t1 - t0)).toFixed(1) + ',' + (130 - 120 * (v - lo) / (hi - lo)).toFixed(1)).join(' '));
      svg.append(line);
      const label = document.createElementNS(NS, 'text');
      label.setAttribute('x', '12'); label.setAttribute('y', '16');
      label.textContent = sum + ' tokens saved';
      svg.append(label);
    }
    $('chart').replaceChildren(svg);
    $('chart').setAttribute('aria-label', sum + ' tokens saved over ' + pts.length + ' calls');
  }

  async function load() {
    try {
      const r = await get('/ui/api/calls?' + query());
      // Calls that arrived live while the list was on its way stay.
      const last = r.calls.length ? r.calls[r.calls.length - 1].id : 0;
      state.calls = r.calls.concat(state.calls.filter((c) => c.id > last && matches(c))).slice(-r.size);
      state.size = r.size;
      render();
    } catch (e) { status('Could not load the calls: ' + e.message); }
    sessions();
  }

  async function sessions() {
    try {
      const r = await get('/ui/api/sessions');
      const h = r.health;
      let line = h ? ('Upstream ' + (h.upstream || '') + ': ' + (h.status || '') + ', ' + (h.sessions ?? 0) + ' sessions in all') : '';
      if (h && typeof h.apiCalls === 'number') line += ', ' + h.apiCalls + ' API calls, ' + (h.apiErrors ?? 0) + ' without an answer';
      $('health').textContent = line;
      $('sessions').replaceChildren(...r.sessions.map((s) => el('li', s.session + ': ' + s.state + ', ' + (s.calls ?? 0) +
        ' calls (' + (s.shaped ?? 0) + ' shaped, ' + (s.tokensSaved ?? 0) + ' tokens saved)')));
    } catch (e) { $('health').textContent = 'Could not load the sessions: ' + e.message; }
  }

  // stream reads the server-sent events of /ui/api/events with fetch, so
  // that a bearer token can travel with it (EventSource sends none).
  async function stream() {
    if (state.stream) state.stream.abort();
    const ctl = new AbortController();
    state.stream = ctl;
    try {
      const r = await fetch('/ui/api/events', { headers: headers(), credentials: 'same-origin', signal: ctl.signal, cache: 'no-store' });
      if (!r.ok) { status('Live updates refused: ' + r.status + ' ' + (await r.text()).trim()); return; }
      status('Live: new calls appear as they happen');
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2);
          let event = 'message', data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (event === 'call' && data) onCall(JSON.parse(data));
        }
      }
      status('Live updates ended; reload to reconnect');
    } catch (e) {
      if (!ctl.signal.aborted) status('Live updates lost: ' + e.message);
    }
  }

  let refresh = null;
  function onCall(c) {
    if (!matches(c)) return;
    state.calls.push(c);
    if (state.calls.length > state.size) state.calls.shift();
    const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#calls tbody tr');
    const id = focused ? focused.dataset.id : null;
    render();
    if (id) { const tr = $('calls').querySelector('tr[data-id="' + CSS.escape(id) + '"]'); if (tr) tr.focus(); }
    clearTimeout(refresh);
    refresh = setTimeout(sessions, 500);
  }

  async function open(id, tr) {
    for (const r of $('calls').querySelectorAll('tr[aria-selected]')) r.removeAttribute('aria-selected');
    if (tr) tr.setAttribute('aria-selected', 'true');
    state.open = { id, tr };
    try {
      const d = await get('/ui/api/calls/' + encodeURIComponent(id));
      const c = d.call;
      $('detail').hidden = false;
      $('detail-h').textContent = 'Call ' + c.id + ': ' + c.tool + ' (' + c.strategy + ', ' + c.tokensBefore + ' → ' + c.tokensAfter + ' tokens)';
      $('received').textContent = typeof d.result === 'string' ? d.result : JSON.stringify(d.result, null, 2);
      $('parts').replaceChildren(...(d.parts || []).map((p) => el('li', p.type + ' (' + p.bytes + ' bytes)' + (p.text ? ': ' + p.text : ''))));
      if (!d.parts || d.parts.length === 0) $('parts').replaceChildren(el('li', 'one body'));
      $('cursors').replaceChildren(...(d.cursors || []).map((k) => el('li', k.name + ': ' + (k.token || 'hidden (start with --ui-show-arguments to see cursors)'))));
      if (!d.cursors || d.cursors.length === 0) $('cursors').replaceChildren(el('li', 'none'));
      $('args-box').hidden = !d.arguments;
      $('args').textContent = d.arguments || '';
      state.offset = 0;
      if (d.original) await page(0);
      else { $('orig-info').textContent = 'Passed through unchanged: the model received the original.'; $('original').textContent = ''; buttons(-1, 0); }
      $('detail-h').focus();
    } catch (e) { status('Could not open call ' + id + ': ' + e.message); }
  }

  async function page(offset) {
    try {
      const p = await get('/ui/api/calls/' + encodeURIComponent(state.open.id) + '/original?offset=' + offset);
      state.offset = p.offset; state.next = p.next;
      $('original').textContent = p.text;
      const end = p.offset + new TextEncoder().encode(p.text).length;
      $('orig-info').textContent = 'Bytes ' + p.offset + '–' + end + ' of ' + p.total + ' (one page at a time)';
      buttons(p.next, p.offset);
    } catch (e) {
      $('orig-info').textContent = e.status === 410 ? 'The original is no longer kept: its snapshot left the store.' : 'Could not read the original: ' + e.message;
      $('original').textContent = '';
      buttons(-1, 0);
    }
  }
  function buttons(next, offset) {
    $('orig-next').disabled = next < 0;
    $('orig-prev').disabled = offset <= 0;
  }
  function close() {
    $('detail').hidden = true;
    const tr = state.open && state.open.tr;
    state.open = null;
    if (tr && tr.isConnected) tr.focus();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('token').value = state.token;
    $('access').addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.token = $('token').value.trim();
      if (state.token) sessionStorage.setItem('ctxfit-ui-token', state.token); else sessionStorage.removeItem('ctxfit-ui-token');
      load(); stream();
    });
    $('filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = new FormData($('filters'));
      state.filter = { tool: f.get('tool'), strategy: f.get('strategy'), status: f.get('status'), session: f.get('session') };
      load();
    });
    $('filters').addEventListener('reset', () => { state.filter = {}; setTimeout(load, 0); });
    $('close').addEventListener('click', close);
    document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && !$('detail').hidden) close(); });
    $('orig-next').addEventListener('click', () => { if (state.next >= 0) page(state.next); });
    $('orig-prev').addEventListener('click', () => page(Math.max(0, state.offset - 32768)));
    load(); stream();
  });
})();
