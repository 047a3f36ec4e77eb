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
  function showTokenState() {
    $('token-state').textContent = token() ? 'token set for this session' : 'no token yet';
  }
  function showError(err) {
    const box = $('error');
    if (!err) { box.hidden = true; box.textContent = ''; return; }
    box.textContent = err.message || String(err);
    box.hidden = false;
  }

  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + token() };
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

  // loadList shows the first page of workflows, or with more=true appends
  // the next page.
  async function loadList(more) {
    showError(null);
    const list = $('workflows');
    const user = $('filter-user').value.trim();
    let path = '/admin/v1/workflows?limit=100';
    if (user) path += '&userId=' + encodeURIComponent(user);
    if (more && nextCursor) path += '&cursor=' + encodeURIComponent(nextCursor);
    try {
      const data = await api('GET', path);
      if (!more) clear(list);
      nextCursor = data.nextCursor || '';
      $('more').hidden = !nextCursor;
      $('list-empty').hidden = list.children.length + data.workflows.length > 0;
      for (const wf of data.workflows) {
        const li = el('li', null,
          el('div', 'wf-id', wf.id),
          el('div', null, badge(wf.status), badge(wf.mode, 'mode'), 'user ', el('b', null, wf.userId),
            ' · round ' + wf.round + ' step ' + wf.step),
          el('div', 'meta', 'updated ' + when(wf.updatedAt) + (wf.stopReason ? ' · ' + wf.stopReason : '')));
        li.dataset.id = wf.id;
        if (wf.id === current) li.classList.add('selected');
        li.addEventListener('click', () => openWorkflow(wf.id));
        list.appendChild(li);
      }
    } catch (err) { showError(err); }
  }

  async function openWorkflow(id) {
    showError(null);
    current = id;
    for (const li of $('workflows').children) li.classList.toggle('selected', li.dataset.id === id);
    const base = '/admin/v1/workflows/' + encodeURIComponent(id);
    try {
      const [wf, msgs, traces] = await Promise.all([
        api('GET', base), api('GET', base + '/messages'), api('GET', base + '/traces')]);
      renderSummary(wf);
      clear($('render-out'));
      renderTimeline(msgs.messages, traces.traces);
      $('detail').hidden = false;
    } catch (err) { showError(err); }
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
    if (wf.error) s.appendChild(el('div', 'feedback', wf.error));
  }

  // renderTimeline groups messages and traces by round, then by step.
  function renderTimeline(messages, traces) {
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
      for (const t of calls) c.appendChild(renderCall(t));
      return c;
    };
    if (item.traces.some((t) => t.stage === 'stage1' || t.stage === 'stage2')) {
      box.appendChild(el('div', 'stages', col('stage1', 'Stage 1 — choose the action'), col('stage2', 'Stage 2 — parameters')));
    }
    for (const t of item.traces.filter((t) => t.stage !== 'stage1' && t.stage !== 'stage2')) box.appendChild(renderCall(t));
    for (const m of item.messages) box.appendChild(renderMessage(m));
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

  function renderCall(t) {
    // An action trace with a prompt is an action's own model call
    // (ai.process): shown and replayable like a stage call.
    if (t.stage === 'action' && !(t.prompt && t.prompt.length)) return renderAction(t);
    const rejected = !!t.error;
    const call = el('div', 'call' + (rejected ? ' rejected' : ''));
    call.dataset.stage = t.stage;
    call.dataset.traceId = t.id;
    call.appendChild(el('div', 'meta', badge(rejected ? 'rejected' : 'accepted'),
      t.stage + ' · attempt ' + t.attempt + ' · ' + (t.model || 'no model') + ' · prompt ' + t.promptTokens +
      ' tok · completion ' + t.completionTokens + ' tok · ' + t.latencyMs + ' ms · template ' + (t.template || '-')));
    if (rejected) call.appendChild(el('div', 'feedback', 'Rejected — feedback sent back: ' + t.error));
    call.appendChild(el('div', 'pair',
      el('div', null, el('div', 'role', 'prompt'), renderPrompt(t.prompt)),
      el('div', null, el('div', 'role', 'raw reply'), el('pre', 'reply-text', t.response || ''))));
    call.appendChild(replayControls(t));
    return call;
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
        out.appendChild(el('pre', 'reply-text', res.response));
      } catch (err) { clear(out); out.appendChild(el('div', 'feedback', err.message)); }
    };
    replay.addEventListener('click', () => run(null));
    edit.addEventListener('click', () => {
      clear(out);
      const area = el('textarea');
      area.value = JSON.stringify(t.prompt, null, 2);
      const send = el('button', null, 'Send edited prompt');
      send.addEventListener('click', () => {
        let prompt;
        try { prompt = JSON.parse(area.value); } catch (err) { showError(new Error('the edited prompt is not JSON: ' + err.message)); return; }
        run(prompt);
      });
      out.appendChild(area);
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

  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = $('token').value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v);
    $('token').value = '';
    showTokenState();
    loadList();
  });
  $('forget-token').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenState();
    clear($('workflows'));
    $('detail').hidden = true;
  });
  $('filter-form').addEventListener('submit', (ev) => { ev.preventDefault(); loadList(); });
  $('more').addEventListener('click', () => loadList(true));
  $('render-stage1').addEventListener('click', () => render('stage1'));
  $('render-stage2').addEventListener('click', () => render('stage2'));
  $('render-plan').addEventListener('click', () => render('plan'));

  showTokenState();
  if (token()) loadList();
})();
