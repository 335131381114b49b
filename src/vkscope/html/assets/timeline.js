/* vkscope HTML timeline: draws the capture held in the page's #vkscope-data block.
 * Plain script, no libraries; everything it needs is in this file and the data block. */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------------------------------
  // Small helpers

  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function esc(value) {
    return String(value).replace(/[&<>"']/g, (c) => ESC[c]);
  }

  function isInt(v) {
    return typeof v === 'number' && Number.isInteger(v);
  }

  function grouped(n) {
    if (typeof n !== 'number') return String(n);
    const s = String(Math.abs(n)).split('.');
    s[0] = s[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return (n < 0 ? '-' : '') + s.join('.');
  }

  function plural(n, noun) {
    return grouped(n) + ' ' + noun + (n === 1 ? '' : 's');
  }

  // A duration or a time in ns, with three significant digits or so.
  function fmtNs(ns) {
    if (ns === null || ns === undefined || Number.isNaN(ns)) return '—';
    const a = Math.abs(ns);
    let v, unit;
    if (a >= 1e9) { v = ns / 1e9; unit = ' s'; }
    else if (a >= 1e6) { v = ns / 1e6; unit = ' ms'; }
    else if (a >= 1e3) { v = ns / 1e3; unit = ' µs'; }
    else return Math.round(ns) + ' ns';
    const av = Math.abs(v);
    return v.toFixed(av >= 100 ? 1 : av >= 10 ? 2 : 3) + unit;
  }

  function fmtBytes(n) {
    if (!isInt(n)) return '? bytes';
    if (n < 1024) return plural(n, 'byte');
    const units = ['KiB', 'MiB', 'GiB', 'TiB'];
    let v = n / 1024, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u += 1; }
    return v.toFixed(1) + ' ' + units[u];
  }

  function dims(values) {
    return values.map((v) => (isInt(v) ? String(v) : '?')).join('×');
  }

  function lowerBound(arr, value) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (arr[mid] < value) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // ---------------------------------------------------------------------------------------
  // The data, turned into typed arrays indexed by workload (submission order)

  const D = JSON.parse($('vkscope-data').textContent);
  const W = D.workloads;
  const N = W.count;
  const TIMED = D.timing.timed > 0;
  const qOf = Int32Array.from(W.q);
  const fOf = Int32Array.from(W.f);
  const tOf = Int32Array.from(W.t);
  const ixOf = Int32Array.from(W.ix);  // the workload's identity across frames (D.identities)
  // Identity `ix` (the columns of D.identities): what it is, the steady frames it ran in and
  // its GPU time over them ([count, min, p50, p90, p99, max]; null: never timed).
  function identityAt(ix) {
    const I = D.identities;
    if (!(ix >= 0 && ix < I.count)) return null;
    const [queue, l, type] = I.scopes[I.scope[ix]];
    const g = I.gpu;
    return {
      queue, l, type, ordinal: I.ordinal[ix], frames: I.frames[ix],
      gpu: g.count[ix] ? [g.count[ix], g.min[ix], g.p50[ix], g.p90[ix], g.p99[ix], g.max[ix]] : null,
    };
  }
  // Under a cost budget, identity `ix`'s [frames, measured, median GPU time, reason never
  // measured]; null without a budget or without its coverage.
  function coverageAt(ix) {
    const c = D.budget && D.budget.coverage;
    if (!c || c.frames[ix] === null || c.frames[ix] === undefined) return null;
    return [c.frames[ix], c.measured[ix], c.median[ix], c.reason[ix]];
  }
  const lOf = Int32Array.from(W.l);
  const mOf = Int32Array.from(W.m);
  const x0 = new Float64Array(N);  // where the workload starts on the timeline (ns or slot)
  const x1 = new Float64Array(N);
  const onLine = new Uint8Array(N);  // 1: it has a place on the timeline
  const gpu = new Float64Array(N);  // GPU time in ns, NaN when not measured
  // The timer's floor of each workload's queue family (docs/timing.md): a GPU time up to
  // near_ns is near the floor, and each carries the family's uncertainty.
  const floorOf = (i) => (D.queues[qOf[i]] || {}).floor || null;
  const nearFloor = (i) => {
    const fl = floorOf(i);
    return !Number.isNaN(gpu[i]) && fl !== null && fl.near_ns !== null && gpu[i] <= fl.near_ns;
  };
  const indexOfId = new Map();
  for (let i = 0; i < N; i++) {
    indexOfId.set(W.id[i], i);
    if (W.b[i] !== null) {
      gpu[i] = W.e[i] - W.b[i];
    } else {
      gpu[i] = NaN;
    }
    if (TIMED) {
      if (W.b[i] !== null) { x0[i] = W.b[i]; x1[i] = W.e[i]; onLine[i] = 1; }
    } else {
      x0[i] = i; x1[i] = i + 1; onLine[i] = 1;  // submission order, one slot each
    }
  }

  // Workload types and their colours
  const KNOWN_COLOURS = {
    renderpass: '#4e79a7',
    dispatch: '#f28e2b',
    trace_rays: '#b07aa1',
    buffer_transfer: '#59a14f',
    image_transfer: '#76b7b2',
    acceleration_structure: '#d4a52c',
  };
  const EXTRA_COLOURS = ['#e15759', '#9c755f', '#ff9da7', '#8cd17d', '#b6992d', '#499894'];
  const typeName = D.types.map((t) => (t === null ? 'unknown' : t));
  let extra = 0;
  const typeColour = D.types.map((t) => {
    if (t === null) return '#9aa0a6';
    return KNOWN_COLOURS[t] || EXTRA_COLOURS[extra++ % EXTRA_COLOURS.length];
  });
  const typeCount = new Int32Array(D.types.length);
  for (let i = 0; i < N; i++) typeCount[tOf[i]]++;

  // Label tree: one node per distinct label prefix; node 0 is the root (no label).
  const nodes = [{ name: 'All workloads', parent: -1, depth: 0, children: [], path: '' }];
  const nodeByKey = new Map();
  const stackNodes = D.labels.map((path) => {
    const chain = [];
    let parent = 0;
    for (const name of path) {
      const key = parent + '\u0000' + name;
      let id = nodeByKey.get(key);
      if (id === undefined) {
        id = nodes.length;
        const p = nodes[parent];
        nodes.push({
          name, parent, depth: p.depth + 1, children: [],
          path: p.path ? p.path + '/' + name : name,
        });
        p.children.push(id);
        nodeByKey.set(key, id);
      }
      chain.push(id);
      parent = id;
    }
    return chain;
  });
  const leafOfStack = Int32Array.from(stackNodes, (c) => (c.length ? c[c.length - 1] : 0));
  const labelPath = D.labels.map((p) => p.join('/'));
  // Pre-order numbering, so "is in the subtree of" is an interval test.
  const tin = new Int32Array(nodes.length);
  const tout = new Int32Array(nodes.length);
  (function number() {
    let clock = 0;
    const stack = [[0, 0]];
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [id, child] = top;
      if (child === 0) tin[id] = clock++;
      if (child < nodes[id].children.length) {
        top[1] += 1;
        stack.push([nodes[id].children[child], 0]);
      } else {
        tout[id] = clock;
        stack.pop();
      }
    }
  })();

  // Frames
  const processesSeen = new Set(D.frames.map((f) => f.process));
  const devicesSeen = new Set(D.frames.map((f) => f.process + ':' + f.device));
  const frames = D.frames.map((f) => {
    let name = f.number === null ? 'no frame' : 'frame ' + f.number;
    if (devicesSeen.size > processesSeen.size) name += ' · device ' + f.device;
    if (processesSeen.size > 1) name += ' · process ' + f.process;
    if (f.captured === false) name += ' (not captured)';
    if (f.warmup) name += ' (warm-up)';
    return { name, number: f.number, warmup: f.warmup || null, count: 0, gpu: 0, x0: Infinity, x1: -Infinity };
  });
  for (let i = 0; i < N; i++) {
    const f = frames[fOf[i]];
    f.count++;
    if (!Number.isNaN(gpu[i])) f.gpu += gpu[i];
    if (onLine[i]) {
      if (x0[i] < f.x0) f.x0 = x0[i];
      if (x1[i] > f.x1) f.x1 = x1[i];
    }
  }

  const queueName = D.queues.map((q) => q.name);
  // In the table, the queue's id alone, unless several processes make the name necessary.
  const queueShort = processesSeen.size > 1 ? queueName : D.queues.map((q) => (q.queue === null ? '?' : String(q.queue)));

  // ---------------------------------------------------------------------------------------
  // What is shown

  const S = {
    frame: -1,  // index into frames, -1: all of them
    hidden: new Uint8Array(D.types.length),  // types switched off in the legend
    labelNode: -1,  // label subtree the table is narrowed to, -1: none
    sel: -1,
    hover: -1,
    hoverBand: null,
    v0: 0,
    v1: 1,
    sortCol: 'id',
    sortDir: 1,
    counter: (D.counters || [])[0] || null,  // the counter of the table column and the chart
    expanded: new Uint8Array(nodes.length),
  };
  for (let n = 0; n < nodes.length; n++) if (nodes[n].depth <= 1) S.expanded[n] = 1;

  function shown(i) {
    return (S.frame < 0 || fOf[i] === S.frame) && !S.hidden[tOf[i]];
  }

  function inLabel(i) {
    if (S.labelNode < 0) return true;
    const t = tin[leafOfStack[lOf[i]]];
    return t >= tin[S.labelNode] && t < tout[S.labelNode];
  }

  // ---------------------------------------------------------------------------------------
  // Describing a workload

  const summaryCache = new Map();
  function summary(i) {
    const key = tOf[i] * 1e9 + mOf[i];
    let text = summaryCache.get(key);
    if (text === undefined) {
      text = describe(D.types[tOf[i]], D.metadata[mOf[i]]);
      summaryCache.set(key, text);
    }
    return text;
  }

  function describe(type, md) {
    switch (type) {
      case 'renderpass': {
        const parts = [dims([md.width, md.height])];
        if (isInt(md.layers) && md.layers > 1) parts[0] += ', ' + md.layers + ' layers';
        parts.push(isInt(md.draws) ? plural(md.draws, 'draw') : '? draws');
        if (Array.isArray(md.attachments)) parts.push(plural(md.attachments.length, 'attachment'));
        if (md.split) parts.push('split');
        return parts.join(', ');
      }
      case 'dispatch': {
        let text = Array.isArray(md.groups) ? dims(md.groups) + ' groups' : 'indirect, groups not known';
        if (Array.isArray(md.groups) && Array.isArray(md.local_size)) text += ' of ' + dims(md.local_size);
        if (isInt(md.invocations)) text += ' = ' + plural(md.invocations, 'invocation');
        return text;
      }
      case 'trace_rays':
        return dims([md.width, md.height, md.depth]) + ' rays';
      case 'buffer_transfer':
        return (md.kind || '?') + ' ' + fmtBytes(md.bytes);
      case 'image_transfer':
        return (md.kind || '?') + ' ' + (isInt(md.pixels) ? plural(md.pixels, 'pixel') : '? pixels');
      case 'acceleration_structure':
        return (md.kind || '?') + ', ' + (isInt(md.count) ? plural(md.count, 'structure') : '? structures');
      default: {
        const skip = new Set(['device', 'type', 'api']);
        return Object.keys(md)
          .filter((k) => !skip.has(k) && (md[k] === null || typeof md[k] !== 'object'))
          .map((k) => k + '=' + md[k])
          .join(', ');
      }
    }
  }

  function swatch(t) {
    return '<span class="swatch" style="background:' + typeColour[t] + '"></span>';
  }

  function frameNumber(i) {
    const n = frames[fOf[i]].number;
    return n === null ? '—' : n;
  }

  // ---------------------------------------------------------------------------------------
  // Header and notes

  function renderHeader() {
    const c = D.capture;
    $('cap-file').textContent = c.file;
    const status = $('cap-status');
    status.textContent = c.status;
    status.className = 'status ' + c.status;
    const facts = [];
    const fact = (k, v) => facts.push('<span>' + esc(k) + ' <b>' + esc(v) + '</b></span>');
    for (const p of c.processes) fact('process', (p.name || '?') + ' (pid ' + (p.pid ?? '?') + ')');
    for (const d of c.devices) {
      fact('device', (d.name || '?') + (d.driver ? ' · ' + d.driver : ''));
      if (d.clock_domain) {
        const dev = d.clock_max_deviation_ns !== null ? ' (±' + fmtNs(d.clock_max_deviation_ns) + ')' : '';
        fact('GPU clock', d.clock_domain + dev);
      }
    }
    fact('workloads', grouped(N));
    facts.push('<span>' + esc(c.frames_text) + '</span>');
    fact('GPU times', TIMED ? grouped(D.timing.timed) + ' of ' + grouped(N) : 'none');
    if (c.dropped) fact('dropped', plural(c.dropped, 'message'));
    if (c.created_utc) fact('captured', c.created_utc.replace('T', ' ').replace(/\.\d+/, ''));
    $('cap-facts').innerHTML = facts.join('');

    const notes = [];
    if (c.frames_hint) notes.push(esc(c.frames_hint.charAt(0).toUpperCase() + c.frames_hint.slice(1)) + '.');
    if (D.frames.some((f) => f.warmup)) {
      notes.push('Warm-up frames (' + esc(D.warmup.said) + ') are marked in the frame picker and ' +
        'left out of each workload\'s GPU time over frames in the details.');
    }
    const floors = D.queues.map((q) => q.floor).filter((fl) => fl);
    if (floors.length) {
      const seen = new Map(floors.map((fl) => [fl.family, fl]));
      const text = Array.from(seen.values()).map((fl) => 'queue family ' + fl.family + ' ' + fmtNs(fl.floor_ns) +
        ' (uncertainty ' + fmtNs(fl.uncertainty_ns) + ')').join(', ');
      let near = 0;
      for (let i = 0; i < N; i++) near += nearFloor(i) ? 1 : 0;
      notes.push('The timer\'s floor (what an empty workload reads between the layer\'s timestamps): ' + esc(text) +
        '. ' + plural(near, 'workload') + ' within ' + floors[0].factor + '× it ' + (near === 1 ? 'is' : 'are') +
        ' marked <span class="near-floor">near</span> in the table and the details.');
    }
    if (N === 0) notes.push('This capture holds no workloads: nothing was submitted while it ran.');
    else if (!TIMED) {
      notes.push('<b>No GPU times in this capture</b> (timing was off): the timeline lays the ' +
        'workloads out in <b>submission order</b>, one equal slot each, so widths say nothing ' +
        'about cost. Turn the layer\'s timing on to see GPU time.');
    } else if (D.timing.untimed) {
      const reasons = Object.entries(D.timing.untimed_reasons)
        .map(([r, n]) => esc(r) + ' (' + grouped(n) + ')').join('; ');
      const one = D.timing.untimed === 1;
      notes.push(grouped(D.timing.untimed) + ' of ' + plural(N, 'workload') +
        (one ? ' has no GPU time and is' : ' have no GPU time and are') +
        ' not on the timeline (the table lists ' + (one ? 'it' : 'them') + '): ' + reasons + '.');
    }
    for (const note of (D.gpu_state || {}).notes || []) notes.push(esc(note) + '.');
    if (D.budget) {
      const b = D.budget;
      const rotation = b.rotation_median ? '; every workload once in ' + plural(b.rotation_median, 'frame') : '';
      notes.push('<b>Cost budget ' + b.percent + '%</b> of the frame without instruments: each frame ' +
        'measured a share of its workloads (median ' + grouped(b.measured_median ?? 0) + ' of ' +
        grouped(b.workloads_median ?? 0) + rotation + '), ' + plural(b.baseline_frames, 'frame') +
        ' none (to time the frame without them). ' + grouped(b.measured_identities) + ' of ' +
        identities(b.identities) +
        ' measured; a workload\'s values come from the frames that measured it (its details say how many).');
      if (b.never_total) {
        const items = b.never.map((n) => '<li>' + esc(n.type || 'unknown') + ' #' + n.ordinal +
          (n.label_path ? ' <span class="dim">' + esc(n.label_path) + '</span>' : '') + ' on queue ' +
          esc(n.queue) + ': ' + esc(n.reason) + '</li>').join('');
        const more = b.never_total > b.never.length
          ? '<li>… ' + grouped(b.never_total - b.never.length) + ' more</li>' : '';
        notes.push('<details id="never-measured"><summary>' +
          identities(b.never_total) +
          ' never measured</summary><ul>' + items + more + '</ul></details>');
      }
    }
    if (D.timing.per_device_clocks) {
      notes.push('The devices\' GPU clocks cannot be compared: each device\'s times start at 0 on ' +
        'its own clock.');
    }
    if (c.status === 'incomplete') {
      notes.push('The capture is <b>incomplete</b>: the application ended without saying goodbye ' +
        '(crashed or killed), so the last frames may be missing work.');
    } else if (c.status === 'capturing') {
      notes.push('The capture was never finalized (still being written, or vkscope was stopped).');
    }
    if (c.diagnostics) {
      const items = c.diagnostic_reasons.map((r) => '<li>' + esc(r) + '</li>').join('');
      const more = c.diagnostics > c.diagnostic_reasons.length
        ? '<li>… ' + grouped(c.diagnostics - c.diagnostic_reasons.length) + ' more</li>' : '';
      notes.push('<details><summary>' + plural(c.diagnostics, 'diagnostic') +
        ' recorded while capturing</summary><ul>' + items + more + '</ul></details>');
    }
    $('notes').innerHTML = notes.map((n) => '<div class="note">' + n + '</div>').join('');
  }

  // ---------------------------------------------------------------------------------------
  // Toolbar: frame picker and legend

  function renderFramePicker() {
    const pick = $('frame-pick');
    const opts = ['<option value="-1">All frames (' + plural(N, 'workload') + ')</option>'];
    frames.forEach((f, k) => {
      const time = TIMED ? ' · ' + fmtNs(f.gpu) : '';
      opts.push('<option value="' + k + '">' + esc(f.name) + ' · ' + plural(f.count, 'workload') +
        time + '</option>');
    });
    pick.innerHTML = opts.join('');
    pick.value = String(S.frame);
  }

  function setFrame(k) {
    k = Math.max(-1, Math.min(frames.length - 1, k | 0));
    S.frame = k;
    $('frame-pick').value = String(k);
    if (S.sel >= 0 && !shown(S.sel)) select(-1);
    fit();
    refreshAll();
  }

  function renderLegend() {
    const chips = [];
    for (let t = 0; t < D.types.length; t++) {
      chips.push('<span class="chip' + (S.hidden[t] ? ' off' : '') + '" data-type="' + t +
        '" title="Click to hide or show">' + swatch(t) + esc(typeName[t]) +
        ' <span class="dim">' + grouped(typeCount[t]) + '</span></span>');
    }
    $('legend').innerHTML = chips.join('');
  }

  // ---------------------------------------------------------------------------------------
  // Timeline geometry: a row per queue, label bands above the workloads' lanes

  const RULER = 26;
  const GUTTER = 150;
  const RIGHT = 12;
  const ROW_PAD = 6;
  const BAND_H = 15;
  const LANE_H = 22;
  const MAX_LANES = 16;
  const MAX_BAND_DEPTH = 6;
  const ROW_MIN_H = 50;

  const laneOf = new Int32Array(N);
  const rows = D.queues.map((q) => ({ q, items: null, maxEnd: null, lanes: 1, depth: 0, bands: [] }));
  (function layout() {
    const lists = rows.map(() => []);
    for (let i = 0; i < N; i++) if (onLine[i]) lists[qOf[i]].push(i);
    rows.forEach((row, r) => {
      const list = lists[r];
      list.sort((a, b) => x0[a] - x0[b] || x1[b] - x1[a] || a - b);
      row.items = Int32Array.from(list);
      row.maxEnd = new Float64Array(list.length);
      // Lanes: a workload goes in the first lane free at its start (overlaps need several).
      const laneEnd = [];
      let maxEnd = -Infinity;
      list.forEach((i, j) => {
        let lane = laneEnd.findIndex((end) => end <= x0[i]);
        if (lane < 0) {
          if (laneEnd.length < MAX_LANES) lane = laneEnd.length;
          else lane = laneEnd.indexOf(Math.min(...laneEnd));
        }
        laneEnd[lane] = Math.max(laneEnd[lane] || -Infinity, x1[i]);
        laneOf[i] = lane;
        maxEnd = Math.max(maxEnd, x1[i]);
        row.maxEnd[j] = maxEnd;
        row.depth = Math.max(row.depth, stackNodes[lOf[i]].length);
      });
      row.lanes = Math.max(1, laneEnd.length);
      row.depth = Math.min(row.depth, MAX_BAND_DEPTH);
      // Label bands: consecutive workloads (in time) of one frame under one label merge.
      for (let d = 0; d < row.depth; d++) {
        const bands = [];
        let open = null;
        for (const i of list) {
          const chain = stackNodes[lOf[i]];
          const node = d < chain.length ? chain[d] : -1;
          if (open && open.node === node && open.frame === fOf[i]) {
            if (x1[i] > open.x1) open.x1 = x1[i];
            open.n++;
            continue;
          }
          if (open) bands.push(open);
          open = node < 0 ? null : { node, frame: fOf[i], x0: x0[i], x1: x1[i], n: 1, depth: d };
        }
        if (open) bands.push(open);
        row.bands.push(bands);
      }
    });
  })();

  // The GPU's clocks and power as the host sampled them: a row per track under the queues,
  // on the timeline's axis (drawn only with GPU times to draw them against).
  const GPU_ROW_H = 46;
  const gpuTracks = (TIMED ? (D.gpu_state || {}).tracks || [] : []).map((tr) => {
    const t = Float64Array.from(tr.t), v = Float64Array.from(tr.v);
    let lo = Infinity, hi = -Infinity;
    for (const x of v) { if (x < lo) lo = x; if (x > hi) hi = x; }
    return { name: tr.name, gpu: tr.gpu, unit: tr.unit, t, v, lo, hi };
  });

  let rowTop = [];
  let gpuTop = RULER;
  let canvasH = RULER;
  function rowGeometry() {
    rowTop = [];
    let y = RULER;
    for (const row of rows) {
      rowTop.push(y);
      // Tall enough for the queue's name, flags and device in the gutter.
      row.height = Math.max(ROW_MIN_H, ROW_PAD * 2 + row.depth * BAND_H + row.lanes * LANE_H);
      y += row.height;
    }
    gpuTop = y;
    y += gpuTracks.length * GPU_ROW_H;
    canvasH = Math.max(y, RULER + 40);
  }

  function drawGpuTracks(left, right) {
    gpuTracks.forEach((tr, k) => {
      const top = gpuTop + k * GPU_ROW_H;
      const span = tr.hi - tr.lo || 1;
      const yOf = (v) => top + GPU_ROW_H - 8 - (v - tr.lo) / span * (GPU_ROW_H - 18);
      let j = Math.max(0, lowerBound(tr.t, S.v0) - 1);
      if (j >= tr.t.length) return;
      ctx.strokeStyle = k % 2 ? '#c0504d' : '#2f6db5';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(Math.max(toPx(tr.t[j]), left - 2), yOf(tr.v[j]));
      for (j += 1; j < tr.t.length; j++) {
        const px = Math.min(toPx(tr.t[j]), right + 2);
        ctx.lineTo(px, yOf(tr.v[j - 1]));  // a sample holds until the next one
        ctx.lineTo(px, yOf(tr.v[j]));
        if (tr.t[j] > S.v1) break;
      }
      ctx.stroke();
    });
  }

  function drawGpuGutter() {
    gpuTracks.forEach((tr, k) => {
      const top = gpuTop + k * GPU_ROW_H;
      ctx.fillStyle = '#f1f4f9';
      ctx.fillRect(0, top, GUTTER - 4, GPU_ROW_H);
      ctx.fillStyle = '#1d2327';
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(fitText(tr.name, GUTTER - 10), 8, top + 12);
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#6b7378';
      const range = tr.lo === tr.hi ? String(tr.lo) : tr.lo + '–' + tr.hi;
      ctx.fillText(fitText(range + ' ' + tr.unit, GUTTER - 10), 8, top + 26);
      ctx.fillText(fitText(tr.gpu, GUTTER - 10), 8, top + 39);
      ctx.fillStyle = '#dcdfe1';
      ctx.fillRect(0, top + GPU_ROW_H - 1, cssW, 1);
    });
  }
  rowGeometry();

  function lanesTop(r) {
    return rowTop[r] + ROW_PAD + rows[r].depth * BAND_H;
  }

  const canvas = $('timeline');
  const wrap = $('timeline-wrap');
  const ctx = canvas.getContext('2d');
  let cssW = 800;
  let dpr = 1;

  function resizeCanvas() {
    cssW = Math.max(320, wrap.clientWidth);
    dpr = window.devicePixelRatio || 1;
    canvas.style.height = canvasH + 'px';
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(canvasH * dpr);
  }

  function plotW() {
    return cssW - GUTTER - RIGHT;
  }

  function toPx(x) {
    return GUTTER + (x - S.v0) * plotW() / (S.v1 - S.v0);
  }

  function toX(px) {
    return S.v0 + (px - GUTTER) * (S.v1 - S.v0) / plotW();
  }

  // ---------------------------------------------------------------------------------------
  // View: what part of the timeline is on screen

  function extent() {
    if (S.frame >= 0) {
      const f = frames[S.frame];
      if (f.x0 <= f.x1) return [f.x0, f.x1];
    }
    let lo = Infinity, hi = -Infinity;
    for (const f of frames) {
      if (f.x0 < lo) lo = f.x0;
      if (f.x1 > hi) hi = f.x1;
    }
    return lo <= hi ? [lo, hi] : [0, 1];
  }

  function minSpan() {
    return TIMED ? 50 : 2;
  }

  function fit() {
    const [lo, hi] = extent();
    const span = Math.max(hi - lo, minSpan());
    S.v0 = lo - span * 0.01;
    S.v1 = lo + span * 1.01;
  }

  function extentSpan() {
    const [lo, hi] = extent();
    return Math.max(hi - lo, minSpan());
  }

  function clampSpan(span) {
    return Math.min(Math.max(span, minSpan()), extentSpan() * 4);
  }

  // Shows [v0, v1], within limits: not narrower than minSpan(), not wider than four times the
  // work, and never so far off that none of the work is on screen.
  function setView(v0, v1) {
    const [lo, hi] = extent();
    const span = clampSpan(v1 - v0);
    const keep = Math.min(span, extentSpan()) * 0.1;
    let start = span === v1 - v0 ? v0 : (v0 + v1) / 2 - span / 2;
    start = Math.min(Math.max(start, lo - span + keep), hi - keep);
    S.v0 = start;
    S.v1 = start + span;
    requestDraw();
  }

  function zoomAt(factor, anchor) {
    const span = S.v1 - S.v0;
    const next = clampSpan(span * factor);
    const start = anchor - (anchor - S.v0) * next / span;
    setView(start, start + next);
  }

  function pan(fraction) {
    const d = (S.v1 - S.v0) * fraction;
    setView(S.v0 + d, S.v1 + d);
  }

  // ---------------------------------------------------------------------------------------
  // Drawing

  let drawPending = false;
  function requestDraw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      draw();
    });
  }

  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function tickText(value, step) {
    if (!TIMED) return '#' + Math.round(value);
    const scale = step >= 1e9 ? 1e9 : step >= 1e6 ? 1e6 : step >= 1e3 ? 1e3 : 1;
    const unit = scale === 1e9 ? 's' : scale === 1e6 ? 'ms' : scale === 1e3 ? 'µs' : 'ns';
    const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / scale) - 1e-9)));
    return (value / scale).toFixed(decimals) + ' ' + unit;
  }

  function origin() {
    if (S.frame >= 0 && frames[S.frame].x0 <= frames[S.frame].x1) return frames[S.frame].x0;
    return 0;
  }

  let charW = 6.5;
  function fitText(text, width) {
    const max = Math.floor((width - 6) / charW);
    if (max < 2) return '';
    return text.length <= max ? text : text.slice(0, max - 1) + '…';
  }

  function draw() {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, canvasH);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz0123456789').width / 36 || 6.5;
    const left = GUTTER, right = cssW - RIGHT;
    const scroll = wrap.scrollTop;
    const viewBottom = scroll + wrap.clientHeight;

    // Frames: alternating shades behind the rows, when all frames are shown.
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, 0, right - left, canvasH);
    ctx.clip();
    if (S.frame < 0 && frames.length > 1) {
      frames.forEach((f, k) => {
        if (f.x0 > f.x1 || f.x1 < S.v0 || f.x0 > S.v1) return;
        const a = toPx(f.x0), b = toPx(f.x1);
        ctx.fillStyle = k % 2 ? '#f3f5f8' : '#fbfbfc';
        ctx.fillRect(a, RULER, Math.max(1, b - a), canvasH - RULER);
      });
    }

    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      const top = rowTop[r];
      if (top > viewBottom || top + row.height < scroll) continue;
      // Label bands
      for (let d = 0; d < row.depth; d++) {
        const y = top + ROW_PAD + d * BAND_H;
        for (const band of row.bands[d]) {
          if (band.x1 < S.v0 || band.x0 > S.v1) continue;
          if (S.frame >= 0 && band.frame !== S.frame) continue;
          const a = Math.max(toPx(band.x0), left - 2), b = Math.min(toPx(band.x1), right + 2);
          const active = S.labelNode >= 0 && tin[band.node] >= tin[S.labelNode] &&
            tin[band.node] < tout[S.labelNode];
          ctx.fillStyle = active ? '#bcd2f7' : d % 2 ? '#dfe4ea' : '#e9edf1';
          ctx.fillRect(a, y + 1, Math.max(1, b - a - 1), BAND_H - 2);
          if (b - a > 24) {
            ctx.fillStyle = '#39434b';
            ctx.fillText(fitText(nodes[band.node].name, b - a), a + 3, y + BAND_H / 2);
          }
        }
      }
      // Workloads
      const lt = lanesTop(r);
      const items = row.items;
      const lastPx = new Float64Array(row.lanes).fill(-Infinity);
      const texts = [];
      let j = lowerBound(row.maxEnd, S.v0);
      let colour = '', alpha = 1;
      for (; j < items.length; j++) {
        const i = items[j];
        if (x0[i] > S.v1) break;
        if (x1[i] < S.v0 || !shown(i)) continue;
        let a = toPx(x0[i]), b = toPx(x1[i]);
        if (a < left - 2) a = left - 2;
        if (b > right + 2) b = right + 2;
        let w = b - a;
        const lane = laneOf[i];
        if (w < 1) {
          if (a < lastPx[lane]) continue;  // this pixel already holds a workload
          w = 1;
        } else if (w > 2) {
          w -= 0.5;  // a hairline gap keeps neighbours apart
        }
        lastPx[lane] = a + 1;
        const want = inLabel(i) ? 1 : 0.22;
        if (want !== alpha) { alpha = want; ctx.globalAlpha = alpha; }
        if (typeColour[tOf[i]] !== colour) { colour = typeColour[tOf[i]]; ctx.fillStyle = colour; }
        ctx.fillRect(a, lt + lane * LANE_H + 2, w, LANE_H - 4);
        if (w > 30) texts.push(i, a, w);
      }
      ctx.globalAlpha = 1;
      ctx.fillStyle = '#ffffff';
      for (let k = 0; k < texts.length; k += 3) {
        const i = texts[k];
        const chain = D.labels[lOf[i]];
        const name = chain.length ? chain[chain.length - 1] : typeName[tOf[i]];
        ctx.fillText(fitText(name, texts[k + 2]), texts[k + 1] + 3, lt + laneOf[i] * LANE_H + LANE_H / 2);
      }
    }

    // Selection and hover outlines
    for (const [i, style, width] of [[S.hover, '#1d2327', 1], [S.sel, '#d62728', 2]]) {
      if (i < 0 || !onLine[i] || !shown(i)) continue;
      const r = qOf[i];
      const a = Math.max(toPx(x0[i]), left - 2), b = Math.min(toPx(x1[i]), right + 2);
      if (b < left || a > right) continue;
      ctx.strokeStyle = style;
      ctx.lineWidth = width;
      ctx.strokeRect(a - 1, lanesTop(r) + laneOf[i] * LANE_H + 1, Math.max(2, b - a) + 2, LANE_H - 2);
    }
    drawGpuTracks(left, right);
    ctx.restore();
    drawGpuGutter();

    // Row names and separators
    for (let r = 0; r < rows.length; r++) {
      const top = rowTop[r];
      const q = rows[r].q;
      ctx.fillStyle = r % 2 ? '#f4f6f8' : '#fafbfc';
      ctx.fillRect(0, top, GUTTER - 4, rows[r].height);
      ctx.fillStyle = '#1d2327';
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(fitText(q.name, GUTTER - 10), 8, top + 13);
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#6b7378';
      const flags = q.flags.length ? q.flags.join(' · ') : (q.family !== null ? 'family ' + q.family : '');
      if (flags) ctx.fillText(fitText(flags, GUTTER - 10), 8, top + 28);
      if (q.device_name && rows[r].height > 44) ctx.fillText(fitText(q.device_name, GUTTER - 10), 8, top + 42);
      ctx.fillStyle = '#dcdfe1';
      ctx.fillRect(0, top + rows[r].height - 1, cssW, 1);
    }

    // Ruler, kept at the top of the scrolled area
    const y0 = scroll;
    ctx.fillStyle = '#eef0f2';
    ctx.fillRect(0, y0, cssW, RULER);
    ctx.fillStyle = '#c9ced2';
    ctx.fillRect(0, y0 + RULER - 1, cssW, 1);
    const span = S.v1 - S.v0;
    const step = Math.max(niceStep(span / Math.max(1, plotW() / 110)), TIMED ? 1 : 1);
    const o = origin();
    const first = Math.ceil((S.v0 - o) / step) * step + o;
    ctx.font = '11px system-ui, sans-serif';
    for (let t = first; t <= S.v1; t += step) {
      const px = toPx(t);
      if (px < left || px > right) continue;
      ctx.fillStyle = '#9aa3aa';
      ctx.fillRect(px, y0 + RULER - 7, 1, 6);
      ctx.fillStyle = 'rgba(0,0,0,0.05)';
      ctx.fillRect(px, y0 + RULER, 1, canvasH - RULER);
      ctx.fillStyle = '#39434b';
      ctx.fillText(tickText(t - o, step), px + 3, y0 + 9);
    }
    if (S.frame < 0 && frames.length > 1) {
      ctx.fillStyle = '#6b7378';
      for (const f of frames) {
        if (f.x0 > f.x1) continue;
        const a = toPx(f.x0), b = toPx(f.x1);
        if (b < left || a > right || b - a < 40) continue;
        ctx.fillText(fitText(f.name, b - a), Math.max(a, left) + 3, y0 + 19);
      }
    }
    ctx.fillStyle = '#eef0f2';
    ctx.fillRect(0, y0, GUTTER - 4, RULER - 1);
    ctx.fillStyle = '#6b7378';
    ctx.fillText(TIMED ? (S.frame >= 0 ? 'from frame start' : 'from first workload') : 'submission order', 8, y0 + 13);
    $('view-span').textContent = TIMED ? 'showing ' + fmtNs(span) : 'showing ' + grouped(Math.round(span)) + ' slots';
  }

  // ---------------------------------------------------------------------------------------
  // Finding what is under the pointer

  function hitAt(cx, cy) {
    if (cy < wrap.scrollTop + RULER || cx < GUTTER || cx > cssW - RIGHT) return null;
    let r = -1;
    for (let k = 0; k < rows.length; k++) {
      if (cy >= rowTop[k] && cy < rowTop[k] + rows[k].height) { r = k; break; }
    }
    if (r < 0) return null;
    const row = rows[r];
    const xv = toX(cx);
    const tol = 3 * (S.v1 - S.v0) / plotW();
    const lt = lanesTop(r);
    if (cy < lt) {
      const d = Math.floor((cy - rowTop[r] - ROW_PAD) / BAND_H);
      if (d < 0 || d >= row.depth) return null;
      for (const band of row.bands[d]) {
        if (S.frame >= 0 && band.frame !== S.frame) continue;
        if (xv >= band.x0 - tol && xv <= band.x1 + tol) return { band };
      }
      return null;
    }
    const lane = Math.floor((cy - lt) / LANE_H);
    if (lane >= row.lanes) return null;
    let best = -1, bestD = Infinity;
    for (let j = lowerBound(row.maxEnd, xv - tol); j < row.items.length; j++) {
      const i = row.items[j];
      if (x0[i] > xv + tol) break;
      if (laneOf[i] !== lane || !shown(i)) continue;
      const dist = xv < x0[i] ? x0[i] - xv : xv > x1[i] ? xv - x1[i] : 0;
      if (dist < bestD || (dist === bestD && best >= 0 && x1[i] - x0[i] < x1[best] - x0[best])) {
        best = i;
        bestD = dist;
      }
    }
    return best >= 0 && bestD <= tol ? { i: best } : null;
  }

  function canvasPoint(e) {
    const rect = canvas.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  }

  // Under a cost budget: in how many frames the workload's identity was measured, and its
  // median GPU time over those, or why no frame measured it.
  function identities(n) {
    return grouped(n) + (n === 1 ? ' workload identity' : ' workload identities');
  }
  function coverageHtml(at) {
    const [framesSeen, measured, median, reason] = coverageAt(at);
    if (!measured) return '<span class="null">never measured: ' + esc(reason || '') + '</span>';
    return 'measured in ' + grouped(measured) + ' of ' + plural(framesSeen, 'frame') +
      (median !== null ? ' · median GPU ' + fmtNs(median) : '');
  }

  // ---------------------------------------------------------------------------------------
  // Tooltip

  const tooltip = $('tooltip');
  function showTooltip(hit, e) {
    if (!hit) { tooltip.hidden = true; return; }
    let html;
    if (hit.band) {
      const b = hit.band;
      html = '<div class="t-head">' + esc(nodes[b.node].name) + '</div>' +
        '<div>' + esc(nodes[b.node].path) + '</div>' +
        '<div class="t-dim">' + plural(b.n, 'workload') + (TIMED ? ' over ' + fmtNs(b.x1 - b.x0) : '') +
        ' · ' + esc(frames[b.frame].name) + ' · click to pick in the label tree</div>';
    } else {
      const i = hit.i;
      const time = Number.isNaN(gpu[i]) ? 'no GPU time' : 'GPU ' + fmtNs(gpu[i]) +
        ' <span class="t-dim">at ' + fmtNs(x0[i] - origin()) + '</span>';
      html = '<div class="t-head">' + swatch(tOf[i]) + esc(typeName[tOf[i]]) +
        ' <span class="t-dim">#' + W.id[i] + '</span></div>' +
        (labelPath[lOf[i]] ? '<div>' + esc(labelPath[lOf[i]]) + '</div>' : '') +
        '<div>' + time + '</div>' +
        (coverageAt(ixOf[i]) ? '<div class="t-dim">' + coverageHtml(ixOf[i]) + '</div>' : '') +
        '<div>' + esc(summary(i)) + '</div>' +
        '<div class="t-dim">' + esc(frames[fOf[i]].name) + ' · ' + esc(queueName[qOf[i]]) +
        ' · ' + esc(D.metadata[mOf[i]].api || '') + '</div>';
    }
    tooltip.innerHTML = html;
    tooltip.hidden = false;
    const pad = 14;
    let x = e.clientX + pad, y = e.clientY + pad;
    const w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = e.clientX - w - pad;
    if (y + h > window.innerHeight - 4) y = e.clientY - h - pad;
    tooltip.style.left = Math.max(4, x) + 'px';
    tooltip.style.top = Math.max(4, y) + 'px';
  }

  // ---------------------------------------------------------------------------------------
  // Pointer, wheel and keyboard

  const pointers = new Map();
  let drag = null;
  let pinch = null;

  canvas.addEventListener('pointerdown', (e) => {
    canvas.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, [e.clientX, e.clientY]);
    tooltip.hidden = true;
    if (pointers.size === 1) {
      drag = { x: e.clientX, y: e.clientY, v0: S.v0, v1: S.v1, scroll: wrap.scrollTop, moved: false };
    } else if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const rect = canvas.getBoundingClientRect();
      pinch = {
        dist: Math.hypot(a[0] - b[0], a[1] - b[1]) || 1,
        anchor: toX((a[0] + b[0]) / 2 - rect.left),
        v0: S.v0,
        v1: S.v1,
      };
      drag = null;
    }
  });

  canvas.addEventListener('pointermove', (e) => {
    if (pointers.has(e.pointerId)) pointers.set(e.pointerId, [e.clientX, e.clientY]);
    if (pinch && pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const dist = Math.hypot(a[0] - b[0], a[1] - b[1]) || 1;
      const span = (pinch.v1 - pinch.v0) * pinch.dist / dist;
      const ratio = (pinch.anchor - pinch.v0) / (pinch.v1 - pinch.v0);
      setView(pinch.anchor - ratio * span, pinch.anchor - ratio * span + span);
      return;
    }
    if (drag) {
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) > 4) {
        drag.moved = true;
        canvas.classList.add('dragging');
      }
      if (drag.moved) {
        const per = (drag.v1 - drag.v0) / plotW();
        setView(drag.v0 - dx * per, drag.v1 - dx * per);
        wrap.scrollTop = drag.scroll - dy;
      }
      return;
    }
    const [cx, cy] = canvasPoint(e);
    const hit = hitAt(cx, cy);
    const hover = hit && hit.i !== undefined ? hit.i : -1;
    if (hover !== S.hover) { S.hover = hover; requestDraw(); }
    canvas.style.cursor = hit ? 'pointer' : '';
    showTooltip(hit, e);
  });

  function endPointer(e) {
    const wasClick = drag && !drag.moved && pointers.size === 1;
    pointers.delete(e.pointerId);
    if (pointers.size < 2) pinch = null;
    canvas.classList.remove('dragging');
    if (wasClick && e.type === 'pointerup') {
      const [cx, cy] = canvasPoint(e);
      const hit = hitAt(cx, cy);
      if (hit && hit.band) setLabelNode(hit.band.node);
      else select(hit ? hit.i : -1, { scrollTable: true });
    }
    drag = null;
  }
  canvas.addEventListener('pointerup', endPointer);
  canvas.addEventListener('pointercancel', endPointer);
  canvas.addEventListener('pointerleave', () => {
    tooltip.hidden = true;
    if (S.hover >= 0) { S.hover = -1; requestDraw(); }
  });

  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const dx = e.deltaX * scale, dy = e.deltaY * scale;
    if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      pan((Math.abs(dx) > Math.abs(dy) ? dx : dy) / plotW());
      return;
    }
    const [cx] = canvasPoint(e);
    // Trackpad pinches arrive as wheel events with ctrlKey set and small deltas.
    const factor = Math.exp(dy * (e.ctrlKey ? 0.01 : 0.002));
    zoomAt(factor, toX(Math.min(Math.max(cx, GUTTER), cssW - RIGHT)));
  }, { passive: false });

  wrap.addEventListener('scroll', requestDraw);

  document.addEventListener('keydown', (e) => {
    const tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
    const middle = (S.v0 + S.v1) / 2;
    const keys = {
      '+': () => zoomAt(1 / 1.5, middle),
      '=': () => zoomAt(1 / 1.5, middle),
      '-': () => zoomAt(1.5, middle),
      '0': () => { fit(); requestDraw(); },
      ArrowLeft: () => pan(-0.2),
      ArrowRight: () => pan(0.2),
      '[': () => setFrame(S.frame - 1),
      ']': () => setFrame(S.frame + 1),
      Escape: () => select(-1),
    };
    const action = keys[e.key];
    if (action) { e.preventDefault(); action(); }
  });

  $('zoom-in').addEventListener('click', () => zoomAt(1 / 1.5, (S.v0 + S.v1) / 2));
  $('zoom-out').addEventListener('click', () => zoomAt(1.5, (S.v0 + S.v1) / 2));
  $('zoom-fit').addEventListener('click', () => { fit(); requestDraw(); });
  $('pan-left').addEventListener('click', () => pan(-0.25));
  $('pan-right').addEventListener('click', () => pan(0.25));
  $('frame-pick').addEventListener('change', (e) => setFrame(parseInt(e.target.value, 10)));
  $('frame-prev').addEventListener('click', () => setFrame(S.frame - 1));
  $('frame-next').addEventListener('click', () => setFrame(S.frame + 1));
  $('legend').addEventListener('click', (e) => {
    const chip = e.target.closest('[data-type]');
    if (!chip) return;
    const t = parseInt(chip.dataset.type, 10);
    S.hidden[t] ^= 1;
    if (S.sel >= 0 && !shown(S.sel)) select(-1);
    renderLegend();
    refreshAll();
  });

  // ---------------------------------------------------------------------------------------
  // Selection and the details panel

  function select(i, opts) {
    opts = opts || {};
    S.sel = i;
    renderDetails();
    if (opts.reveal && i >= 0) reveal(i);
    if (opts.scrollTable && i >= 0) scrollTableTo(i);
    renderRows();
    requestDraw();
  }

  function reveal(i) {
    if (!shown(i)) {
      if (S.frame >= 0 && fOf[i] !== S.frame) setFrame(fOf[i]);
      if (S.hidden[tOf[i]]) { S.hidden[tOf[i]] = 0; renderLegend(); refreshAll(); }
    }
    if (!onLine[i]) return;
    const span = S.v1 - S.v0;
    const width = (toPx(x1[i]) - toPx(x0[i]));
    const inside = x1[i] >= S.v0 && x0[i] <= S.v1;
    if (!inside || width < 3) {
      const want = width < 3 ? Math.max((x1[i] - x0[i]) * 12, minSpan()) : span;
      const next = Math.min(span, want);
      const mid = (x0[i] + x1[i]) / 2;
      setView(mid - next / 2, mid + next / 2);
    }
    const r = qOf[i];
    const y = lanesTop(r) + laneOf[i] * LANE_H;
    if (y < wrap.scrollTop + RULER || y + LANE_H > wrap.scrollTop + wrap.clientHeight) {
      wrap.scrollTop = Math.max(0, y - RULER - 20);
    }
    const box = wrap.getBoundingClientRect();
    if (box.top < 0 || box.top > window.innerHeight - 60) wrap.scrollIntoView({ block: 'start' });
    draw();
  }

  function enumName(key, value) {
    const kind = { format: 'format', load: 'load', stencil_load: 'load', store: 'store', stencil_store: 'store' }[key];
    const names = kind && D.enums[kind];
    const name = names && names[String(value)];
    return name ? esc(name) + ' <span class="dim">(' + value + ')</span>' : null;
  }

  function valueHtml(value, key) {
    if (value === null || value === undefined) return '<span class="null">null</span>';
    if (Array.isArray(value)) {
      if (value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
        const cols = [];
        for (const v of value) for (const k of Object.keys(v)) if (!cols.includes(k)) cols.push(k);
        return '<table class="sub"><thead><tr>' + cols.map((c) => '<th>' + esc(c) + '</th>').join('') +
          '</tr></thead><tbody>' + value.map((v) => '<tr>' + cols.map((c) =>
            '<td>' + (c in v ? valueHtml(v[c], c) : '') + '</td>').join('') + '</tr>').join('') +
          '</tbody></table>';
      }
      return '[' + value.map((v) => valueHtml(v, key)).join(', ') + ']';
    }
    if (typeof value === 'object') {
      return '<table class="kv">' + Object.keys(value).map((k) =>
        '<tr><th>' + esc(k) + '</th><td>' + valueHtml(value[k], k) + '</td></tr>').join('') + '</table>';
    }
    if (typeof value === 'number') return enumName(key, value) || esc(grouped(value));
    if (typeof value === 'boolean') return String(value);
    return esc(value);
  }

  function renderDetails() {
    const box = $('details');
    const i = S.sel;
    if (i < 0) {
      box.innerHTML = '<p class="dim">Click a workload on the timeline or in the table.</p>';
      return;
    }
    const md = D.metadata[mOf[i]];
    const q = D.queues[qOf[i]];
    const f = frames[fOf[i]];
    const [submit, tag] = W.key[i].split('.');
    const lines = [];
    const row = (k, v) => lines.push('<tr><th>' + esc(k) + '</th><td>' + v + '</td></tr>');
    row('workload', '#' + W.id[i] + ' <span class="dim">(instance ' + esc(W.key[i]) + ')</span>');
    row('frame', esc(f.name));
    row('queue', esc(q.name) + (q.family !== null ? ' · family ' + q.family + ', index ' + q.index : '') +
      (q.flags.length ? ' <span class="dim">(' + esc(q.flags.join(', ')) + ')</span>' : ''));
    if (q.device_name) row('device', esc(q.device_name));
    const chain = D.labels[lOf[i]];
    row('labels', chain.length ? '<span class="crumbs">' + chain.map((l) => '<span>' + esc(l) + '</span>').join('<i> / </i>') + '</span>'
      : '<span class="null">none</span>');
    row('submit', 'submitID ' + esc(submit) + ', tagID ' + esc(tag) + ', position ' + W.ord[i]);
    row('submitted (CPU)', W.s[i] === null ? '<span class="null">unknown</span>'
      : fmtNs(W.s[i]) + ' <span class="dim">after the first submit</span>');
    if (W.sc[i] !== null) {
      row('completed (CPU)', fmtNs(W.sc[i]) + ' <span class="dim">after the first submit ' +
        '(the layer saw its submission done)</span>');
    }
    const [timing, reason, serialization] = D.timing.states[W.ti[i]];
    if (timing !== null) {
      row('timing', esc(timing) + (reason ? ' <span class="dim">(' + esc(reason) + ')</span>' : ''));
    }
    if (serialization !== null) row('serialization', esc(serialization));
    if (coverageAt(ixOf[i])) row('coverage', coverageHtml(ixOf[i]));
    if (Number.isNaN(gpu[i])) {
      const why = reason || timing || (TIMED ? 'not timed' : 'timing was off');
      row('GPU time', '<span class="null">' + esc(why) + '</span>');
    } else {
      const fl = floorOf(i);
      const within = fl && fl.uncertainty_ns !== null
        ? ' <span class="dim">(its own cost: down to ' + fmtNs(Math.max(0, gpu[i] - fl.uncertainty_ns)) + ')</span>' : '';
      row('GPU time', '<b>' + fmtNs(gpu[i]) + '</b>' + within + (f.gpu > 0
        ? ' <span class="dim">(' + (100 * gpu[i] / f.gpu).toFixed(1) + '% of the frame\'s)</span>' : ''));
      if (nearFloor(i)) {
        row('timer floor', '<span class="near-floor">near the timer\'s floor</span> <span class="dim">(within ' +
          fl.factor + '× the floor of ' + fmtNs(fl.floor_ns) + ' on queue family ' + fl.family +
          ': the time says little beyond "short")</span>');
      }
      row('GPU begin', fmtNs(W.b[i] - (f.x0 <= f.x1 ? f.x0 : 0)) + ' <span class="dim">into the frame</span>');
      row('GPU end', fmtNs(W.e[i] - (f.x0 <= f.x1 ? f.x0 : 0)) + ' <span class="dim">into the frame</span>');
    }
    if (md.counters && typeof md.counters === 'object') {
      row('counters', valueHtml(md.counters, 'counters'));
    } else if (md.counters_reason) {
      row('counters', '<span class="null">' + esc(md.counters_reason) + '</span>');
    }
    // khr counters joined over their passes: each one the cycle did not give, and why.
    const missing = md.counters_missing && typeof md.counters_missing === 'object'
      ? Object.entries(md.counters_missing) : [];
    if (missing.length) {
      row('counters missing', missing.map(([name, why]) =>
        esc(name) + ': <span class="null">' + esc(String(why)) + '</span>').join('<br>'));
    }
    const over = identityAt(ixOf[i]);
    if (over && over.gpu) {
      // Its identity's GPU time over the frames it ran in (warm-up frames left out).
      const [count, lo, p50, p90, p99, hi] = over.gpu;
      const cells = [['min', lo], ['p50', p50], ['p90', p90], ['p99', p99], ['max', hi]]
        .map(([k, v]) => k + ' <b>' + fmtNs(v) + '</b>').join(' · ');
      const here = Number.isNaN(gpu[i]) || !p50 ? ''
        : ' <span class="dim">(this frame: ' + (gpu[i] >= p50 ? '+' : '') +
          (100 * (gpu[i] - p50) / p50).toFixed(1) + '% from the median)</span>';
      row('over frames', cells + here + '<br><span class="dim">' + plural(count, 'timed frame') +
        ' of ' + plural(over.frames, 'steady frame') + ' it ran in' +
        (f.warmup ? '; this frame is a warm-up frame (' + esc(f.warmup) + '), left out' : '') +
        '</span>');
    } else if (over) {
      row('over frames', '<span class="null">not timed</span> <span class="dim">(' +
        plural(over.frames, 'steady frame') + ' it ran in)</span>');
    }
    row('summary', esc(summary(i)));
    box.innerHTML = '<h3>' + swatch(tOf[i]) + esc(typeName[tOf[i]]) +
      (md.api ? ' <span class="dim">' + esc(md.api) + '</span>' : '') + '</h3>' +
      '<table class="kv">' + lines.join('') + '</table>' +
      '<h4>Metadata</h4>' + '<div id="details-metadata">' + valueHtml(md, null) + '</div>' +
      '<details><summary class="dim">as JSON</summary><pre class="raw">' +
      esc(JSON.stringify(md, null, 1)) + '</pre></details>';
  }

  // ---------------------------------------------------------------------------------------
  // The workload table: sortable, and only the rows in sight are in the document

  const ROW_H = 24;
  // Counters (docs/counters.md): one of them as a table column and as the per-frame chart.
  const COUNTERS = D.counters || [];
  function counterOf(i, name) {
    const c = D.metadata[mOf[i]].counters;
    return c && typeof c === 'object' && typeof c[name] === 'number' ? c[name] : null;
  }
  const COUNTER_COLUMN = {
    key: 'counter', num: true,
    get title() { return S.counter; },
    value: (i) => counterOf(i, S.counter),
    text: (i) => {
      const v = counterOf(i, S.counter);
      if (v !== null) return grouped(v);
      const md = D.metadata[mOf[i]];
      const missing = md.counters_missing && md.counters_missing[S.counter];
      const why = missing || md.counters_reason;
      return why ? String(why) : '—';
    },
  };
  const COLUMNS = [
    { key: 'id', title: '#', num: true, value: (i) => W.id[i], text: (i) => String(W.id[i]) },
    { key: 'frame', title: 'Frame', num: true, value: (i) => fOf[i], text: (i) => String(frameNumber(i)) },
    { key: 'queue', title: 'Queue', value: (i) => qOf[i], text: (i) => queueShort[qOf[i]] },
    {
      key: 'type', title: 'Type', value: (i) => typeName[tOf[i]], text: (i) => typeName[tOf[i]],
      html: (i) => swatch(tOf[i]) + ' ' + esc(typeName[tOf[i]]),
    },
    { key: 'labels', title: 'Labels', value: (i) => labelPath[lOf[i]], text: (i) => labelPath[lOf[i]] },
    { key: 'details', title: 'Details', value: (i) => summary(i), text: (i) => summary(i) },
    { key: 'submit', title: 'Submitted', num: true, value: (i) => W.s[i], text: (i) => fmtNs(W.s[i]) },
    {
      key: 'begin', title: 'GPU begin', num: true, value: (i) => (Number.isNaN(gpu[i]) ? null : W.b[i] - frames[fOf[i]].x0),
      text: (i) => (Number.isNaN(gpu[i]) ? '—' : fmtNs(W.b[i] - frames[fOf[i]].x0)),
    },
    { key: 'gpu', title: 'GPU time', num: true, value: (i) => (Number.isNaN(gpu[i]) ? null : gpu[i]), text: (i) => fmtNs(gpu[i]) },
    { key: 'floor', title: 'Floor', value: (i) => (nearFloor(i) ? 1 : 0), text: (i) => (nearFloor(i) ? 'near' : '') },
    ...(COUNTERS.length ? [COUNTER_COLUMN] : []),
  ];
  const COLUMN = Object.fromEntries(COLUMNS.map((c) => [c.key, c]));
  let tableRows = new Int32Array(0);

  function renderHead() {
    $('wl-head').innerHTML = COLUMNS.map((c) => {
      const arrow = S.sortCol === c.key ? ' <span class="arrow">' + (S.sortDir > 0 ? '▲' : '▼') + '</span>' : '';
      const sort = S.sortCol === c.key ? (S.sortDir > 0 ? 'ascending' : 'descending') : 'none';
      return '<th data-col="' + c.key + '" aria-sort="' + sort + '"' + (c.num ? ' class="num"' : '') +
        ' title="Sort by ' + esc(c.title) + '">' + esc(c.title) + arrow + '</th>';
    }).join('');
  }

  function buildTable() {
    const list = [];
    for (let i = 0; i < N; i++) if (shown(i) && inLabel(i)) list.push(i);
    const col = COLUMN[S.sortCol];
    if (col.key !== 'id' || S.sortDir < 0) {
      const keys = new Map();
      for (const i of list) keys.set(i, col.value(i));
      const dir = S.sortDir;
      list.sort((a, b) => {
        const ka = keys.get(a), kb = keys.get(b);
        const na = ka === null || ka === undefined, nb = kb === null || kb === undefined;
        if (na || nb) return na && nb ? a - b : na ? 1 : -1;  // unknown values last, either way
        if (ka < kb) return -dir;
        if (ka > kb) return dir;
        return a - b;
      });
    }
    tableRows = Int32Array.from(list);
    $('table-count').textContent = '(' + grouped(tableRows.length) + (tableRows.length === N ? '' : ' of ' + grouped(N)) + ')';
    const chip = $('table-filter');
    if (S.labelNode >= 0) {
      chip.hidden = false;
      chip.innerHTML = 'under <b>' + esc(nodes[S.labelNode].path || nodes[S.labelNode].name) +
        '</b> <button type="button" id="clear-label" title="Show all labels">×</button>';
    } else {
      chip.hidden = true;
      chip.innerHTML = '';
    }
    renderHead();
    renderRows();
  }

  const tableWrap = $('table-wrap');
  function renderRows() {
    const total = tableRows.length;
    const first = Math.max(0, Math.floor(tableWrap.scrollTop / ROW_H) - 10);
    const count = Math.ceil((tableWrap.clientHeight || 400) / ROW_H) + 20;
    const last = Math.min(total, first + count);
    const out = [];
    out.push('<tr class="pad"><td colspan="' + COLUMNS.length + '" style="height:' + first * ROW_H + 'px"></td></tr>');
    for (let k = first; k < last; k++) {
      const i = tableRows[k];
      out.push('<tr class="row' + (i === S.sel ? ' sel' : '') + '" data-i="' + i + '">');
      for (const c of COLUMNS) {
        const content = c.html ? c.html(i) : esc(c.text(i));
        const title = c.key === 'labels' || c.key === 'details' ? ' title="' + esc(c.text(i)) + '"' : '';
        out.push('<td' + (c.num ? ' class="num"' : '') + title + '>' + content + '</td>');
      }
      out.push('</tr>');
    }
    out.push('<tr class="pad"><td colspan="' + COLUMNS.length + '" style="height:' + (total - last) * ROW_H + 'px"></td></tr>');
    $('wl-body').innerHTML = out.join('');
  }

  function scrollTableTo(i) {
    const k = tableRows.indexOf(i);
    if (k < 0) return;
    const top = k * ROW_H, view = tableWrap.clientHeight - ROW_H;
    if (top < tableWrap.scrollTop || top > tableWrap.scrollTop + view - ROW_H) {
      tableWrap.scrollTop = Math.max(0, top - view / 2);
    }
  }

  tableWrap.addEventListener('scroll', () => renderRows());
  $('wl-head').addEventListener('click', (e) => {
    const th = e.target.closest('th[data-col]');
    if (!th) return;
    const key = th.dataset.col;
    if (S.sortCol === key) S.sortDir = -S.sortDir;
    else { S.sortCol = key; S.sortDir = 1; }
    buildTable();
  });
  $('wl-body').addEventListener('click', (e) => {
    const tr = e.target.closest('tr[data-i]');
    if (tr) select(parseInt(tr.dataset.i, 10), { reveal: true });
  });
  $('table-filter').addEventListener('click', (e) => {
    if (e.target.id === 'clear-label') setLabelNode(-1);
  });

  // ---------------------------------------------------------------------------------------
  // The label tree: GPU time of each label, its own (self) and with everything under it

  let treeStats = null;
  function computeTree() {
    const n = nodes.length;
    const selfT = new Float64Array(n), selfN = new Int32Array(n), untimedN = new Int32Array(n);
    for (let i = 0; i < N; i++) {
      if (!shown(i)) continue;
      const node = leafOfStack[lOf[i]];
      selfN[node]++;
      if (Number.isNaN(gpu[i])) untimedN[node]++;
      else selfT[node] += gpu[i];
    }
    const inclT = Float64Array.from(selfT), inclN = Int32Array.from(selfN);
    // Children come after their parent in `nodes`, so one backward pass sums the subtrees.
    for (let k = n - 1; k > 0; k--) {
      const p = nodes[k].parent;
      inclT[p] += inclT[k];
      inclN[p] += inclN[k];
    }
    treeStats = { selfT, selfN, inclT, inclN };
  }

  function renderTree() {
    const { selfT, selfN, inclT, inclN } = treeStats;
    const byTime = TIMED;
    const total = byTime ? inclT[0] : inclN[0];
    $('tree-note').textContent = (S.frame >= 0 ? frames[S.frame].name : 'all frames') +
      (byTime ? '' : ' · no GPU times: shares are of workload counts');
    const out = [];
    const walk = (id) => {
      const node = nodes[id];
      if (id !== 0 && inclN[id] === 0) return;
      const kids = node.children.filter((c) => inclN[c] > 0);
      kids.sort((a, b) => (byTime ? inclT[b] - inclT[a] : inclN[b] - inclN[a]) || a - b);
      const open = S.expanded[id] === 1;
      const share = total > 0 ? (byTime ? inclT[id] : inclN[id]) / total : 0;
      const selfShare = total > 0 ? (byTime ? selfT[id] : selfN[id]) / total : 0;
      out.push('<tr data-node="' + id + '"' + (S.labelNode === id ? ' class="active"' : '') + '>' +
        '<td style="padding-left:' + (6 + node.depth * 16) + 'px">' +
        '<span class="toggle" data-toggle="' + id + '">' + (kids.length ? (open ? '▾' : '▸') : '') + '</span>' +
        '<span class="name" data-pick="' + id + '" title="' + esc(node.path || 'every workload; self: those without labels') +
        '">' + esc(node.name) + '</span></td>' +
        '<td class="num">' + grouped(inclN[id]) + '</td>' +
        '<td class="num self-time">' + (byTime ? fmtNs(selfT[id]) : '—') + '</td>' +
        '<td class="num incl-time">' + (byTime ? fmtNs(inclT[id]) : '—') + '</td>' +
        '<td><div class="bar" title="' + (100 * share).toFixed(1) + '% inclusive, ' +
        (100 * selfShare).toFixed(1) + '% self"><div class="incl" style="width:' + (100 * share).toFixed(2) +
        '%"></div><div class="self" style="width:' + (100 * selfShare).toFixed(2) + '%"></div></div></td></tr>');
      if (open) for (const c of kids) walk(c);
    };
    walk(0);
    $('tree-body').innerHTML = out.join('');
  }

  function setLabelNode(id) {
    S.labelNode = S.labelNode === id ? -1 : id;
    if (S.labelNode > 0) {
      for (let p = nodes[S.labelNode].parent; p >= 0; p = nodes[p].parent) S.expanded[p] = 1;
    }
    buildTable();
    renderTree();
    requestDraw();
  }

  $('tree-body').addEventListener('click', (e) => {
    const toggle = e.target.closest('[data-toggle]');
    if (toggle) {
      const id = parseInt(toggle.dataset.toggle, 10);
      S.expanded[id] ^= 1;
      renderTree();
      return;
    }
    const pick = e.target.closest('[data-pick]');
    if (pick) setLabelNode(parseInt(pick.dataset.pick, 10));
  });

  function refreshAll() {
    computeTree();
    renderTree();
    buildTable();
    renderCounters();
    draw();
  }

  // ---------------------------------------------------------------------------------------
  // A small interface for tests and for poking at the page from the console

  // Per frame, the chosen counter summed over the frame's workloads that have it.
  function counterSums() {
    const sums = frames.map(() => null);
    for (let i = 0; i < N; i++) {
      const v = counterOf(i, S.counter);
      if (v !== null) sums[fOf[i]] = (sums[fOf[i]] || 0) + v;
    }
    return sums;
  }

  function renderCounters() {
    if (!COUNTERS.length) return;
    $('counter-panel').hidden = false;
    const pick = $('counter-pick');
    if (!pick.options.length) {
      pick.innerHTML = COUNTERS.map((c) => '<option value="' + esc(c) + '">' + esc(c) + '</option>').join('');
    }
    pick.value = S.counter;
    const sums = counterSums();
    const top = Math.max(1, ...sums.map((v) => v || 0));
    $('counter-chart').innerHTML = frames.map((f, k) => {
      const v = sums[k];
      const h = v === null ? 0 : Math.max(1, Math.round(100 * v / top));
      return '<div class="cbar' + (k === S.frame ? ' sel' : '') + '" data-frame="' + k + '" title="' +
        esc(f.name + ': ' + (v === null ? 'no values' : grouped(v))) + '"><span style="height:' + h +
        'px"></span><i>' + esc(f.number === null ? '?' : String(f.number)) + '</i></div>';
    }).join('');
  }

  function setCounter(name) {
    if (!COUNTERS.includes(name)) return;
    S.counter = name;
    renderCounters();
    buildTable();
  }

  if (COUNTERS.length) {
    $('counter-pick').addEventListener('change', (e) => setCounter(e.target.value));
    $('counter-chart').addEventListener('click', (e) => {
      const bar = e.target.closest('.cbar');
      if (bar) setFrame(parseInt(bar.dataset.frame, 10));
    });
  }

  function indexOf(id) {
    const i = indexOfId.get(id);
    return i === undefined ? -1 : i;
  }

  window.vkscope = {
    count: N,
    timed: TIMED,
    // Where workload `id` is drawn, in viewport coordinates (null when not on screen).
    positionOf(id) {
      const i = indexOf(id);
      if (i < 0 || !onLine[i] || !shown(i)) return null;
      const a = Math.max(toPx(x0[i]), GUTTER), b = Math.min(toPx(x1[i]), cssW - RIGHT);
      if (b < a) return null;
      const y = lanesTop(qOf[i]) + laneOf[i] * LANE_H + LANE_H / 2;
      const rect = canvas.getBoundingClientRect();
      const box = wrap.getBoundingClientRect();
      const cy = rect.top + y;
      if (cy < box.top + RULER || cy > box.bottom) return null;
      return { x: rect.left + (a + b) / 2, y: cy, width: b - a };
    },
    reveal(id) { const i = indexOf(id); if (i >= 0) reveal(i); },
    select(id) { select(indexOf(id), { reveal: true }); },
    selected() { return S.sel < 0 ? null : W.id[S.sel]; },
    frames() { return frames.map((f, k) => ({ index: k, name: f.name, number: f.number, count: f.count })); },
    frame() { return S.frame; },
    setFrame,
    view() { return { start: S.v0, end: S.v1 }; },
    tableIds() { return Array.from(tableRows, (i) => W.id[i]); },
    counters() { return COUNTERS.slice(); },
    // Workload `id`'s identity across frames, with its GPU time over the steady frames.
    identityOf(id) { const i = indexOf(id); return i < 0 ? null : identityAt(ixOf[i]); },
    // Whether workload `id`'s GPU time is near the timer's floor of its queue family.
    nearFloor(id) { const i = indexOf(id); return i < 0 ? null : nearFloor(i); },
    counterChart() { return counterSums().map((v, k) => ({ frame: frames[k].number, value: v })); },
    setCounter,
    labelTree() {
      return nodes.map((n, id) => ({
        path: n.path, name: n.name, count: treeStats.inclN[id],
        self: treeStats.selfT[id], inclusive: treeStats.inclT[id],
      }));
    },
  };

  // ---------------------------------------------------------------------------------------
  // First render

  try {
    renderHeader();
    renderFramePicker();
    renderLegend();
    resizeCanvas();
    fit();
    computeTree();
    renderTree();
    buildTable();
    renderCounters();
    draw();
  } catch (err) {
    const note = document.createElement('div');
    note.className = 'note error';
    note.textContent = 'The page failed to draw this capture: ' + err;
    $('notes').appendChild(note);
    throw err;
  }
  if (window.ResizeObserver) {
    let width = cssW;
    new ResizeObserver(() => {
      if (Math.max(320, wrap.clientWidth) === width) return;
      resizeCanvas();
      width = cssW;
      draw();
    }).observe(wrap);
  }
  window.vkscopeReady = performance.now();
  requestAnimationFrame(() => requestAnimationFrame(() => {
    window.vkscopePainted = performance.now();
    document.documentElement.dataset.ready = '1';
  }));
})();
