// twostep admin trace viewer. Every piece of workflow data is untrusted
// (user text, model output): it is only ever set with textContent.
'use strict';
(function () {
  const TOKEN_KEY = 'twostep.adminToken';
  const $ = (id) => document.getElementById(id);
  let current = null; // id of the open workflow

  // el builds an element; children are nodes or strings (as text nodes).
  function el(tag, cls, ...children) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function badge(text, kind) { return el('span', 'badge ' + (kind || text), text); }
  function when(s) { const d = new Date(s); return isNaN(d) ? '' : d.toLocaleString(); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
  let devMode = false; // the gateway runs with GATEWAY_INSECURE_DEV: no token needed
  function showTokenState() {
    $('token-state').textContent = token() ? 'token set for this session'
      : devMode ? 'insecure dev mode: no token needed' : 'no token yet';
  }
  function showError(err) {
    const box = $('error');
    if (!err) { box.hidden = true; box.textContent = ''; return; }
    box.textContent = err.message || String(err);
    box.hidden = false;
  }

  function authHeaders() { return token() ? { Authorization: 'Bearer ' + token() } : {}; }

  async function api(method, path, body) {
    const headers = authHeaders();
    const init = { method, headers };
    if (body !== undefined) { headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    const res = await fetch(path, init);
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const detail = data && (data.detail || data.title);
      throw new Error((detail || 'request failed') + ' (HTTP ' + res.status + ')');
    }
    return data;
  }

  let nextCursor = ''; // the listing's next page, '' when there is none
  let listSeq = 0; // the latest listing asked for; an older answer is dropped

  // loadList shows the first page of workflows, or with more=true appends
  // the next page.
  async function loadList(more) {
    showError(null);
    const list = $('workflows');
    const user = $('filter-user').value.trim();
    const q = $('filter-q').value.trim();
    const status = $('filter-status').value;
    let path = '/admin/v1/workflows?limit=100';
    if (user) path += '&userId=' + encodeURIComponent(user);
    if (q) path += '&q=' + encodeURIComponent(q);
    if (status) path += '&status=' + encodeURIComponent(status);
    if (more && nextCursor) path += '&cursor=' + encodeURIComponent(nextCursor);
    const seq = ++listSeq;
    try {
      const data = await api('GET', path);
      if (seq !== listSeq) return; // a newer listing (filter, search) is on its way
      if (!more) clear(list);
      nextCursor = data.nextCursor || '';
      $('more').hidden = !nextCursor;
      $('list-empty').hidden = list.children.length + data.workflows.length > 0;
      for (const wf of data.workflows) {
        const li = el('li', null,
          el('div', 'wf-title', wf.title || '(no prompt)'),
          el('div', null, badge(wf.status), badge(wf.mode, 'mode'), 'user ', el('b', null, wf.userId),
            ' · round ' + wf.round + ' step ' + wf.step),
          el('div', 'meta', 'created ' + when(wf.createdAt) + ' · updated ' + when(wf.updatedAt) +
            (wf.stopReason ? ' · ' + wf.stopReason : '')),
          el('div', 'wf-id', link(wf.id)));
        li.dataset.id = wf.id;
        if (wf.id === current) li.classList.add('selected');
        li.addEventListener('click', (ev) => { if (!ev.target.closest('a')) location.hash = workflowHash(wf.id); });
        list.appendChild(li);
      }
      // Nothing linked or open yet (no workflow, no experiment): open the
      // newest workflow, so the page shows one at once (and its URL).
      if (!more && !current && !linkedID() && !linkedExperiment() && data.workflows.length) location.replace(workflowHash(data.workflows[0].id));
    } catch (err) { showError(err); }
  }

  // Each workflow has a URL, #/workflows/<id>: selecting one sets it, and
  // loading or following such a URL opens that workflow.
  function workflowHash(id) { return '#/workflows/' + encodeURIComponent(id); }
  function linkedID() {
    const m = /^#\/workflows\/([^/]+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : '';
  }
  function link(id) {
    const a = el('a', 'wf-link', id);
    a.href = workflowHash(id);
    return a;
  }
  window.addEventListener('hashchange', () => { const id = linkedID(); if (id && id !== current) openWorkflow(id); });

  // loadActions lists every registered action; an MCP tool shows its
  // server, an OpenAPI operation its source, method and path, each with
  // that server's or document's readiness (from /readyz).
  async function loadActions() {
    const list = $('actions');
    try {
      const [data, ready] = await Promise.all([api('GET', '/admin/v1/actions'),
        fetch('/readyz').then((r) => r.json()).catch(() => ({}))]);
      const checks = (ready && ready.checks) || {};
      clear(list);
      for (const a of data.actions) {
        const kind = a.httpMethod ? 'openapi' : 'mcp';
        const state = a.server ? checks[kind + '.' + a.server] : '';
        const label = (kind === 'openapi' ? 'OpenAPI ' : 'MCP ') + a.server;
        list.appendChild(el('li', null,
          el('div', 'wf-title', a.name), badge(a.effect, 'effect'),
          a.server ? badge(label + (state && state !== 'ok' ? ': ' + state : ''), state && state !== 'ok' ? 'failed' : 'mode') : null,
          a.httpMethod ? el('div', 'meta http-op', a.httpMethod + ' ' + a.httpPath) : null,
          el('div', 'meta', a.description || '')));
      }
    } catch (err) { showError(err); }
  }

  async function openWorkflow(id) {
    showError(null);
    current = id;
    for (const li of $('workflows').children) li.classList.toggle('selected', li.dataset.id === id);
    clear($('render-out'));
    const wf = await refresh(id);
    if (wf && wf.status === 'running') follow(id);
    else stopFollowing();
  }

  // refresh reloads the open workflow, its messages and traces, and the
  // economy report unless live is set: while a round runs, the page
  // refreshes on every event, and the report (every trace, message and
  // document re-read and re-counted) is drawn again when the round ends.
  async function refresh(id, live) {
    const base = '/admin/v1/workflows/' + encodeURIComponent(id);
    try {
      const [wf, msgs, traces, eco] = await Promise.all([
        api('GET', base), api('GET', base + '/messages'), api('GET', base + '/traces'),
        live ? Promise.resolve(null) : api('GET', base + '/economy')]);
      if (id !== current) return null;
      renderSummary(wf);
      if (eco) renderEconomy(eco);
      renderTimeline(msgs.messages, traces.traces, wf.pendingApproval);
      $('detail').hidden = false;
      $('experiment').hidden = true;
      return wf;
    } catch (err) { showError(err); return null; }
  }

  // follow reads the workflow's event stream (fetch, since EventSource
  // cannot send the token) and refreshes the page on each event, until
  // the round ends or another workflow is opened.
  let following = null; // AbortController of the stream being read
  function stopFollowing() {
    if (following) following.abort();
    following = null;
    $('live').hidden = true;
    hideStreaming();
  }
  // showDelta shows a stage reply's field as the model writes it (a
  // delta event): the pieces of one round step's field appended in
  // order, until a committed message replaces them.
  let streamingKey = '';
  function showDelta(d) {
    const key = d.round + '/' + d.step + '/' + d.stage + '/' + d.field;
    const text = $('streaming-text');
    if (key !== streamingKey) {
      streamingKey = key;
      text.textContent = '';
      $('streaming-what').textContent = 'streaming: round ' + d.round + ' step ' + d.step + ' · ' + d.stage + ' ' + d.field;
    }
    text.textContent += d.text;
    $('streaming').hidden = false;
  }
  function hideStreaming() {
    streamingKey = '';
    $('streaming').hidden = true;
    $('streaming-text').textContent = '';
  }
  async function follow(id) {
    stopFollowing();
    const ctl = new AbortController();
    following = ctl;
    const live = $('live');
    live.textContent = 'live: following the running round';
    live.hidden = false;
    let pending = null;
    const later = () => {
      if (pending) return;
      pending = setTimeout(async () => { pending = null; if (current === id) await refresh(id, true); }, 250);
    };
    try {
      const res = await fetch('/admin/v1/workflows/' + encodeURIComponent(id) + '/events',
        { headers: authHeaders(), signal: ctl.signal });
      if (!res.ok || !res.body) throw new Error('event stream answered HTTP ' + res.status);
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const delta = /^event: delta$/m.test(frame) && /^data: (.*)$/m.exec(frame);
          if (delta) showDelta(JSON.parse(delta[1]));
          else if (/^event: (message|status|deleted|approval)$/m.test(frame)) {
            if (/^event: message$/m.test(frame)) hideStreaming();
            later();
          }
        }
      }
      if (current === id) { hideStreaming(); live.textContent = 'live: the round ended'; await refresh(id); }
    } catch (err) {
      if (err.name !== 'AbortError') { live.textContent = 'live: ' + err.message; }
    }
  }

  function renderSummary(wf) {
    const s = $('summary');
    clear(s);
    const st = wf.stats || {};
    s.appendChild(el('h2', null, 'Workflow ', el('span', 'wf-id', wf.id)));
    s.appendChild(el('div', null, badge(wf.status), 'user ', el('b', null, wf.userId), ' · mode ' + wf.mode +
      ' · round ' + wf.round + ' step ' + wf.step + ' of ' + wf.maxSteps +
      (wf.checkpoint ? ' · phase ' + wf.checkpoint.phase : '')));
    s.appendChild(el('div', 'meta', 'LLM calls ' + st.llmCalls + ' · prompt tokens ' + st.promptTokens +
      ' · completion tokens ' + st.completionTokens + ' · actions ' + st.actions +
      (wf.stopReason ? ' · stop reason ' + wf.stopReason : '')));
    const by = Object.entries(st.byStage || {}).sort(([a], [b]) => a.localeCompare(b))
      .map(([stage, b]) => stage + ' ' + b.calls + ' calls, ' + b.promptTokens + ' + ' + b.completionTokens + ' tokens' +
        (b.cachedTokens ? ' (' + b.cachedTokens + ' cached)' : ''));
    if (by.length) s.appendChild(el('div', 'meta by-stage', 'by stage: ' + by.join(' · ')));
    const tc = wf.traceContext || {};
    const traceId = (tc.round || tc.origin || '').split('-')[1];
    if (traceId) s.appendChild(el('div', 'meta trace-id', 'OpenTelemetry trace ', el('span', 'wf-id', traceId)));
    const f = wf.forkedFrom;
    if (f) s.appendChild(el('div', 'meta forked-from', 'forked from ', link(f.workflowId), ' at round ' + f.round + ' step ' + f.step));
    if (wf.error) s.appendChild(el('div', 'feedback', wf.error));
    const p = wf.pendingApproval;
    if (p) {
      // What the owner is asked to decide (POST .../approvals/{id}): a
      // call with its parameters, or an intent (before Stage 2) with the
      // context and the fields Stage 2 will fill.
      const kind = p.kind || 'call';
      const what = kind === 'intent' ?
        el('div', 'approval-intent',
          el('div', 'meta', 'Stage 2 will fill: ' + (p.fields || []).map((f) => f.name + ' (' + f.type + ')').join(', ')),
          el('pre', 'approval-context', p.parametersContext || '')) :
        el('pre', 'approval-params', JSON.stringify(p.parameters, null, 2));
      s.appendChild(el('div', 'approval',
        el('div', null, badge('awaiting approval', 'awaiting_approval'), badge(kind, 'approval-kind'), 'step ' + p.step + ': ', el('b', null, p.action),
          ' (' + p.effect + ')' + (p.connection ? ' on connection ' + p.connection : '')),
        el('div', 'meta', p.actionObjective || ''),
        what,
        el('div', 'meta', 'approval ' + p.id + ' · requested ' + when(p.requestedAt) + ' · expires ' + when(p.expiresAt))));
    }
  }

  // renderEconomy draws the economy report (GET .../economy) as an inline
  // SVG: per step, the prompt tokens of Stage 1 and of Stage 2, the part of
  // them served from the prompt cache, and their output tokens, one
  // polyline each; above it, the totals against the plain tool-calling loop
  // and the cost ratio. Built with DOM calls and presentation attributes
  // only (the page's CSP forbids inline styles and scripts).
  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    for (const c of children) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    return e;
  }
  function usage(c) {
    return c.input + ' in / ' + c.cached + ' cached / ' + c.output + ' out' + (c.usd === undefined ? '' : ' ($' + c.usd.toFixed(4) + ')');
  }
  function renderEconomy(eco) {
    const box = $('economy');
    clear(box);
    const steps = (eco && eco.steps) || [];
    if (!steps.length) return;
    box.appendChild(el('h2', null, 'Economy'));
    const priced = eco.totals.usd !== undefined && eco.plainLoop.usd !== undefined;
    box.appendChild(el('div', 'meta economy-summary', 'Two stages ' + usage(eco.totals) + ' · plain tool-calling loop ' +
      usage(eco.plainLoop) + ' · cost ratio ' + eco.costRatio.toFixed(2) + (priced ? ' (dollars)' : ' (equivalent tokens)')));
    const W = 640, H = 220, L = 56, R = 12, T = 12, B = 28;
    const series = [
      ['stage1', (s) => s.stage1.input, 'Stage 1 input'],
      ['stage2', (s) => s.stage2.input, 'Stage 2 input'],
      ['cached', (s) => s.stage1.cached + s.stage2.cached, 'cached'],
      ['output', (s) => s.stage1.output + s.stage2.output, 'output'],
    ];
    const max = Math.max(1, ...steps.flatMap((s) => series.map(([, f]) => f(s))));
    const x = (i) => L + (steps.length === 1 ? (W - L - R) / 2 : i * (W - L - R) / (steps.length - 1));
    const y = (v) => T + (H - T - B) * (1 - v / max);
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'economy-chart', role: 'img',
      'aria-label': 'tokens per step: Stage 1 and Stage 2 input, cached input and output' });
    chart.appendChild(svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' }));
    chart.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }));
    chart.appendChild(svg('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', class: 'tick' }, String(max)));
    chart.appendChild(svg('text', { x: L - 6, y: H - B, 'text-anchor': 'end', class: 'tick' }, '0'));
    steps.forEach((s, i) => {
      if (steps.length <= 12 || i % Math.ceil(steps.length / 12) === 0) {
        chart.appendChild(svg('text', { x: x(i), y: H - 10, 'text-anchor': 'middle', class: 'tick' }, s.round + '.' + s.step));
      }
    });
    // Stage 1 (dashed) is drawn last, on top, so it stays visible where
    // it equals Stage 2 (drawn wide and pale beneath it).
    const stage1Last = [...series.filter(([n]) => n !== 'stage1'), ...series.filter(([n]) => n === 'stage1')];
    for (const [name, f, label] of stage1Last) {
      const g = svg('g', { class: 'series series-' + name });
      g.appendChild(svg('polyline', { points: steps.map((s, i) => x(i) + ',' + y(f(s))).join(' '), fill: 'none' }));
      steps.forEach((s, i) => g.appendChild(svg('circle', { cx: x(i), cy: y(f(s)), r: 3 },
        svg('title', null, label + ' · round ' + s.round + ' step ' + s.step + ': ' + f(s) + ' tokens' +
          (name === 'stage2' && s.stage2Skipped ? ' (no Stage 2 call)' : '')))));
      chart.appendChild(g);
    }
    box.appendChild(chart);
    box.appendChild(el('div', 'legend', ...series.map(([name, , label]) => el('span', 'key key-' + name, label))));
  }

  // renderTimeline groups messages and traces by round, then by step.
  function renderTimeline(messages, traces, pending) {
    const tl = $('timeline');
    clear(tl);
    const rounds = new Map();
    const slot = (round, step) => {
      if (!rounds.has(round)) rounds.set(round, new Map());
      const steps = rounds.get(round);
      if (!steps.has(step)) steps.set(step, { messages: [], traces: [] });
      return steps.get(step);
    };
    for (const m of messages) slot(m.round, m.role === 'user' ? 0 : m.step).messages.push(m);
    for (const t of traces) slot(t.round, t.step).traces.push(t);
    // The step a paused round waits on shows where it will run.
    if (pending) slot(pending.round, pending.step).pending = pending;
    const byNumber = (a, b) => a[0] - b[0];
    for (const [round, steps] of [...rounds].sort(byNumber)) {
      const r = el('div', 'round', el('h3', null, 'Round ' + round));
      for (const [step, item] of [...steps].sort(byNumber)) r.appendChild(renderStep(step, item));
      tl.appendChild(r);
    }
    if (!rounds.size) tl.appendChild(el('p', 'muted', 'Nothing recorded yet.'));
  }

  function renderStep(step, item) {
    const box = el('div', 'step');
    box.dataset.step = String(step);
    if (step > 0 || item.traces.length) box.appendChild(el('h3', null, step > 0 ? 'Step ' + step : 'Round start'));
    const col = (stage, title) => {
      const c = el('div', 'stage-col', el('h3', null, title));
      const calls = item.traces.filter((t) => t.stage === stage);
      if (!calls.length) c.appendChild(el('p', 'muted', 'no call'));
      calls.forEach((t, i) => c.appendChild(renderCall(t, i > 0 ? calls[i - 1] : null)));
      return c;
    };
    if (item.traces.some((t) => t.stage === 'stage1' || t.stage === 'stage2')) {
      box.appendChild(el('div', 'stages', col('stage1', 'Stage 1 — choose the action'), col('stage2', 'Stage 2 — parameters')));
    }
    for (const t of item.traces.filter((t) => t.stage !== 'stage1' && t.stage !== 'stage2')) box.appendChild(renderCall(t));
    for (const m of item.messages) box.appendChild(renderMessage(m));
    if (item.pending) {
      const p = item.pending;
      box.appendChild(el('div', 'approval timeline-approval',
        el('div', null, badge('awaiting approval', 'awaiting_approval'), badge(p.kind || 'call', 'approval-kind'), el('b', null, p.action),
          ' (' + p.effect + ') is held for its owner\'s decision; expires ' + when(p.expiresAt))));
    }
    return box;
  }

  function renderPrompt(prompt) {
    const wrap = el('div', 'prompt');
    for (const m of prompt || []) wrap.appendChild(el('div', null, el('div', 'role', m.role), el('pre', 'prompt-text', m.content)));
    return wrap;
  }

  // renderAction shows an action trace: the parameters it ran with and an
  // excerpt of its result.
  function renderAction(t) {
    const call = el('div', 'call' + (t.error ? ' rejected' : ''));
    call.dataset.stage = t.stage;
    call.dataset.traceId = t.id;
    call.appendChild(el('div', 'meta', badge(t.error ? 'error' : 'success'),
      'action ' + (t.template || '') + ' · ' + t.latencyMs + ' ms'));
    if (t.error) call.appendChild(el('div', 'feedback', t.error));
    call.appendChild(el('div', 'pair',
      el('div', null, el('div', 'role', 'parameters'), el('pre', null, JSON.stringify(t.parsed, null, 2) || '')),
      el('div', null, el('div', 'role', 'result'), el('pre', 'reply-text', t.response || ''))));
    return call;
  }

  // renderCall shows one model call: the outcome first (the feedback a
  // rejected reply got), then the prompt — for a retry, only what changed
  // since the previous call of the same stage — the raw reply and what was
  // parsed out of it.
  function renderCall(t, prev) {
    // An action trace with a prompt is an action's own model call
    // (ai.process): shown and replayable like a stage call.
    if (t.stage === 'action' && !(t.prompt && t.prompt.length)) return renderAction(t);
    const interrupted = !!t.error && t.error.startsWith('cancelled');
    const rejected = !!t.error && !interrupted;
    const call = el('div', 'call' + (rejected ? ' rejected' : interrupted ? ' interrupted' : ''));
    call.dataset.stage = t.stage;
    call.dataset.traceId = t.id;
    call.dataset.attempt = String(t.attempt);
    call.appendChild(el('div', 'meta', badge(interrupted ? 'interrupted' : rejected ? 'rejected' : 'accepted'),
      t.stage + ' · attempt ' + t.attempt + ' · ' + (t.model || 'no model') + ' · prompt ' + t.promptTokens +
      ' tok' + (t.cachedTokens ? ' (' + t.cachedTokens + ' cached)' : '') + ' · completion ' + t.completionTokens + ' tok · ' + t.latencyMs + ' ms · template ' + (t.template || '-') +
      (t.outputMode ? ' · output ' + t.outputMode : '') +
      (t.finishReason ? ' · finish ' + t.finishReason : '') +
      (t.retries ? ' · ' + t.retries + (t.retries === 1 ? ' provider retry' : ' provider retries') : '')));
    if (interrupted) {
      call.appendChild(el('div', 'meta', 'Interrupted (' + t.error + '); the call was made again when the round resumed.'));
    } else if (rejected) {
      call.appendChild(el('div', 'feedback', 'Rejected — feedback sent back: ' + t.error));
    }
    if (t.ungrounded && t.ungrounded.length) {
      call.appendChild(el('div', 'ungrounded', 'Ungrounded: ' + t.ungrounded.join(', ') +
        ' — in neither the objective nor the parameters context Stage 2 was shown'));
    }
    const promptPane = el('div', null, el('div', 'role', prev ? 'prompt — changes since attempt ' + prev.attempt : 'prompt'));
    if (prev) {
      promptPane.appendChild(renderPromptDiff(prev.prompt || [], t.prompt || []));
      promptPane.appendChild(el('details', null, el('summary', null, 'full prompt'), renderPrompt(t.prompt)));
    } else {
      promptPane.appendChild(renderPrompt(t.prompt));
    }
    const replyPane = el('div', null, el('div', 'role', 'raw reply'), el('pre', 'reply-text', t.response || ''));
    if (t.parsed !== null && t.parsed !== undefined) {
      replyPane.appendChild(el('div', 'role', 'parsed'));
      replyPane.appendChild(el('pre', 'parsed', JSON.stringify(t.parsed, null, 2)));
    }
    call.appendChild(el('div', 'pair', promptPane, replyPane));
    call.appendChild(replayControls(t));
    return call;
  }

  // renderPromptDiff shows, message by message, the lines a retry's prompt
  // added (+) and removed (-) against the previous attempt's; long runs of
  // unchanged lines are folded.
  function renderPromptDiff(before, after) {
    const wrap = el('div', 'prompt diff');
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i++) {
      const a = before[i] ? before[i].content : '';
      const b = after[i] ? after[i].content : '';
      const role = (after[i] || before[i]).role;
      if (a === b) { wrap.appendChild(el('div', 'meta', role + ': unchanged')); continue; }
      const pre = el('pre', 'diff-text');
      for (const [kind, line] of foldSame(diffLines(a.split('\n'), b.split('\n')))) {
        const mark = kind === 'add' ? '+ ' : kind === 'del' ? '- ' : kind === 'skip' ? '' : '  ';
        pre.appendChild(el('span', kind, mark + line + '\n'));
      }
      wrap.appendChild(el('div', null, el('div', 'role', role), pre));
    }
    return wrap;
  }

  // diffLines is a longest-common-subsequence line diff: [kind, line] with
  // kind same, add or del.
  function diffLines(a, b) {
    if (a.length * b.length > 4000000) return [...a.map((l) => ['del', l]), ...b.map((l) => ['add', l])];
    const w = b.length + 1;
    const lcs = new Uint32Array((a.length + 1) * w);
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    const out = [];
    let i = 0, j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) { out.push(['same', a[i]]); i++; j++; }
      else if (j < b.length && (i === a.length || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) { out.push(['add', b[j]]); j++; }
      else { out.push(['del', a[i]]); i++; }
    }
    return out;
  }

  // foldSame keeps two lines of context around changes and folds the rest.
  function foldSame(lines) {
    const keep = lines.map((l, i) => l[0] !== 'same' ||
      lines.slice(Math.max(0, i - 2), i + 3).some((x) => x[0] !== 'same'));
    const out = [];
    for (let i = 0; i < lines.length; i++) {
      if (keep[i]) { out.push(lines[i]); continue; }
      let k = i;
      while (k < lines.length && !keep[k]) k++;
      out.push(['skip', '… ' + (k - i) + ' unchanged lines …']);
      i = k - 1;
    }
    return out;
  }

  function replayControls(t) {
    const out = el('div', 'replay-out');
    const replay = el('button', null, 'Replay now');
    const edit = el('button', null, 'Edit & replay');
    const run = async (prompt) => {
      clear(out);
      out.appendChild(el('p', 'muted', 'asking the model…'));
      try {
        const res = await api('POST', '/admin/v1/traces/' + encodeURIComponent(t.id) + '/replay', prompt ? { prompt } : {});
        clear(out);
        out.appendChild(el('div', 'meta', badge(res.error ? 'rejected' : 'accepted'), (res.model || '') + ' · prompt ' +
          res.promptTokens + ' tok · completion ' + res.completionTokens + ' tok · ' + res.latencyMs + ' ms'));
        if (res.error) out.appendChild(el('div', 'feedback', res.error));
        if (res.note) out.appendChild(el('div', 'meta', res.note));
        if (res.ungrounded && res.ungrounded.length) out.appendChild(el('div', 'ungrounded', 'Ungrounded: ' + res.ungrounded.join(', ')));
        out.appendChild(el('pre', 'reply-text', res.response));
      } catch (err) { clear(out); out.appendChild(el('div', 'feedback', err.message)); }
    };
    replay.addEventListener('click', () => run(null));
    edit.addEventListener('click', () => {
      // One plain-text box per message: no JSON escaping to get right.
      clear(out);
      const areas = (t.prompt || []).map((m) => {
        const area = el('textarea', 'edit-msg');
        area.value = m.content;
        area.dataset.role = m.role;
        out.appendChild(el('div', 'edit-msg', el('div', 'role', m.role), area));
        return area;
      });
      const send = el('button', null, 'Send edited prompt');
      send.addEventListener('click', () => run(areas.map((a) => ({ role: a.dataset.role, content: a.value }))));
      out.appendChild(send);
    });
    return el('div', null, el('div', 'toolbar', replay, edit), out);
  }

  function renderMessage(m) {
    const kind = m.role === 'action' && m.status === 'error' ? 'error' : m.role;
    const box = el('div', 'message ' + kind, el('span', 'role', m.role), ' ');
    if (m.action) box.appendChild(badge(m.action, 'mode'));
    if (m.status) box.appendChild(badge(m.status));
    if (m.actionObjective) box.appendChild(el('div', null, m.actionObjective));
    if (m.text) box.appendChild(el('pre', null, m.text));
    if (m.summary) box.appendChild(el('div', 'meta', 'summary: ' + m.summary));
    if (m.approvedBy) {
      box.appendChild(el('div', 'meta approved-by', 'approved by standing approval ' + m.approvedBy.standingApprovalId +
        ', granted by ' + m.approvedBy.grantedBy));
    }
    for (const d of m.documents || []) box.appendChild(el('div', 'meta', 'document ' + d.name + ' (' + d.mimeType + ', ' + d.size + ' bytes)'));
    return box;
  }

  async function render(stage) {
    if (!current) return;
    const out = $('render-out');
    clear(out);
    try {
      const res = await api('POST', '/admin/v1/workflows/' + encodeURIComponent(current) + '/render', { stage });
      const box = el('div', 'step render', el('h3', null, 'Rendered ' + res.stage + ' (template ' + res.template + ')'));
      box.dataset.stage = res.stage;
      if (res.source) box.appendChild(el('div', 'meta', 'selection from ' + res.source));
      box.appendChild(renderPrompt(res.prompt));
      for (const name of Object.keys(res.placeholders).sort()) {
        box.appendChild(el('details', null, el('summary', null, name + ' (' + res.placeholders[name].length + ' chars)'),
          el('pre', null, res.placeholders[name])));
      }
      out.appendChild(box);
    } catch (err) { out.appendChild(el('div', 'feedback', err.message)); }
  }


  // Experiments: #/experiments/<id> shows one experiment's calls, the
  // recorded and new results side by side with what changed marked;
  // a running one is read again every second.
  function experimentHash(id) { return '#/experiments/' + encodeURIComponent(id); }
  function linkedExperiment() {
    const m = /^#\/experiments\/([^/]+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : '';
  }
  let experimentTimer = null;
  async function openExperiment(id) {
    clearTimeout(experimentTimer);
    showError(null);
    try {
      const e = await api('GET', '/admin/v1/experiments/' + encodeURIComponent(id));
      if (linkedExperiment() !== id) return; // another page was opened meanwhile
      $('detail').hidden = true;
      $('experiment').hidden = false;
      renderExperiment(e);
      if (e.status === 'running') experimentTimer = setTimeout(() => openExperiment(id), 1000);
    } catch (err) { showError(err); }
  }
  function json(v) { return v === undefined ? '' : JSON.stringify(v); }
  // diffRows compares two parsed results key by key (a Stage 1 selection,
  // Stage 2 parameters): one row per key, marked when the values differ.
  function diffRows(recorded, result) {
    const box = el('div', 'diff');
    const a = recorded && typeof recorded === 'object' ? recorded : {};
    const b = result && typeof result === 'object' ? result : {};
    const keys = Array.from(new Set(Object.keys(a).concat(Object.keys(b)))).sort();
    for (const k of keys) {
      const was = json(a[k]), now = json(b[k]);
      if (was === now) { box.appendChild(el('div', 'same', k + ': ' + was)); continue; }
      box.appendChild(el('div', null, k + ': ', el('span', 'del', was || '(none)'), ' ', el('span', 'add', now || '(none)')));
    }
    return box;
  }
  function agreementBadges(a) {
    const out = el('span', null);
    const mark = (name, ok) => out.appendChild(badge(name, ok ? 'completed' : 'failed'));
    for (const name of ['action', 'references', 'fields']) if (a[name] !== undefined) mark(name, a[name]);
    for (const name of Object.keys(a.parameters || {}).sort()) mark(name, a.parameters[name]);
    return out;
  }
  function renderExperiment(e) {
    const sum = $('experiment-summary');
    clear(sum);
    const t = e.totals;
    sum.appendChild(el('h2', null, 'Experiment ', el('span', 'wf-id', e.id)));
    sum.appendChild(el('div', null, badge(e.status), badge(e.stage, 'mode'),
      t.agreed + ' of ' + t.calls + ' calls agree · ' + t.tokens + ' tokens' +
      (t.usd !== undefined ? ' · $' + t.usd.toFixed(4) : '')));
    if (e.error) sum.appendChild(el('div', 'feedback', e.error));
    const stop = $('experiment-stop');
    stop.hidden = e.status !== 'running';
    stop.onclick = async () => {
      try { await api('POST', '/admin/v1/experiments/' + encodeURIComponent(e.id) + '/stop'); openExperiment(e.id); } catch (err) { showError(err); }
    };
    const table = $('experiment-table');
    clear(table);
    table.appendChild(el('tr', null, el('th', null, 'Workflow'), el('th', null, 'Step'), el('th', null, 'Agreement'),
      el('th', null, 'Recorded → new'), el('th', null, 'Tokens')));
    for (const c of e.calls) {
      const row = el('tr', c.agreement.all ? 'agrees' : 'disagrees',
        el('td', 'wf-id', link(c.workflowId)), el('td', null, 'round ' + c.round + ' step ' + c.step),
        el('td', null, agreementBadges(c.agreement)),
        el('td', null, c.error ? el('div', 'feedback', c.error) : null, diffRows(c.recorded, c.result)),
        el('td', null, String(c.tokens) + (c.usd !== undefined ? ' · $' + c.usd.toFixed(4) : '')));
      table.appendChild(row);
    }
  }
  window.addEventListener('hashchange', () => { const id = linkedExperiment(); if (id) openExperiment(id); });
  $('experiment-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const id = $('experiment-id').value.trim();
    if (id) location.hash = experimentHash(id);
  });

  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = $('token').value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v);
    $('token').value = '';
    showTokenState();
    loadList(); loadActions();
  });
  $('forget-token').addEventListener('click', () => {
    stopFollowing();
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenState();
    clear($('workflows'));
    $('detail').hidden = true;
    $('experiment').hidden = true;
  });
  $('filter-form').addEventListener('submit', (ev) => { ev.preventDefault(); loadList(); loadActions(); });
  $('more').addEventListener('click', () => loadList(true));
  $('render-stage1').addEventListener('click', () => render('stage1'));
  $('render-stage2').addEventListener('click', () => render('stage2'));
  $('render-plan').addEventListener('click', () => render('plan'));

  $('filter-status').addEventListener('change', () => loadList());

  // Without a token, ask once: a gateway in insecure dev mode answers, and
  // the page works at once instead of opening blank.
  async function start() {
    if (!token()) {
      const res = await fetch('/admin/v1/workflows?limit=1').catch(() => null);
      devMode = !!(res && res.ok);
    }
    showTokenState();
    if (token() || devMode) {
      if (linkedID()) openWorkflow(linkedID());
      if (linkedExperiment()) openExperiment(linkedExperiment());
      loadList(); loadActions();
    }
  }
  start();
})();
