// report/report_views.js - the interactive views of 'memprof report', built
// into the page's one script (make turns it into report_views_js.h): the
// active memory timeline (every block a band stacked over time, per pixel
// column) and the allocator state at a moment (segments and blocks by
// address).  Reads only the data-* attributes that report_html_bands.c
// writes; trace text reaches the page only through textContent.
(function () {
  'use strict';
  var tip = document.getElementById('tooltip');
  var NB = 7; // fields per block: alloc, free, release, size, requested, address, stack
  var NS = 4; // fields per segment: begin, end, address, size
  var PAD_L = 70, PAD_B = 22, PAD_T = 8; // the timeline's margins, in canvas pixels

  function f64(text) {
    var bin = atob(text || ''), u = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return new Float64Array(u.buffer, 0, u.length >> 3);
  }
  function bytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, v = b;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(2) + ' ' + u[i] : v + ' B');
  }
  function dur(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns + ' ns';
  }
  function showTip(text, x, y) {
    tip.textContent = text;
    tip.hidden = false;
    var r = tip.getBoundingClientRect();
    tip.style.left = Math.max(0, Math.min(x + 14, window.innerWidth - r.width - 4)) + 'px';
    tip.style.top = Math.max(0, Math.min(y + 14, window.innerHeight - r.height - 4)) + 'px';
  }
  var PALETTE = ['#4e79a7', '#2f4b7c', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
                 '#ff9da7', '#9c755f', '#86bcb6', '#d4a6c8', '#a0cbe8', '#8cd17d', '#f1ce63'];
  // One colour per call site, in the order the sites first appear.
  function colours(stacks) {
    var seen = {}, n = 0;
    return stacks.map(function (s) {
      if (!Object.prototype.hasOwnProperty.call(seen, s[0])) seen[s[0]] = PALETTE[n++ % PALETTE.length];
      return seen[s[0]];
    });
  }

  function Device(root) {
    var d = this;
    d.root = root;
    d.B = f64(root.getAttribute('data-blocks'));
    d.n = d.B.length / NB;
    d.S = f64(root.getAttribute('data-segments'));
    d.small = f64(root.getAttribute('data-small'));
    d.smallX0 = +root.getAttribute('data-small-x0') || 0;
    d.smallDx = +root.getAttribute('data-small-dx') || 1;
    d.stacks = JSON.parse(root.getAttribute('data-stacks') || '[]');
    d.marks = JSON.parse(root.getAttribute('data-marks') || '[]');
    d.x1 = +root.getAttribute('data-x1');
    d.time = root.getAttribute('data-axis') === 'time';
    d.x0label = +root.getAttribute('data-x0');
    d.colours = colours(d.stacks);
    d.view = [0, d.x1];
    d.whole = d.n;
    d.moment = null;
    d.PAD = [PAD_L, PAD_T, PAD_B];
    root.mpView = d; // read by tests/browser/views.mjs
    d.events();
  }
  Device.prototype.at = function (x) {
    return this.time ? '+' + dur(x) : 'event ' + (x + this.x0label);
  };
  // Sorted alloc (+size) and free (-size) events of the blocks drawn as bands.
  Device.prototype.events = function () {
    var B = this.B, ev = [];
    for (var i = 0; i < this.n; i++) {
      var o = i * NB;
      if (B[o + 1] <= B[o]) continue;
      ev.push([B[o], B[o + 3]]);
      if (B[o + 1] !== Infinity) ev.push([B[o + 1], -B[o + 3]]);
    }
    ev.sort(function (a, b) { return a[0] - b[0]; });
    this.ev = ev;
    var order = [];
    for (var k = 0; k < this.n; k++) order.push(k);
    order.sort(function (a, b) { return B[a * NB] - B[b * NB] || a - b; });
    this.byAlloc = order; // the blocks by allocation time
  };
  Device.prototype.live = function (i, m) {
    var o = i * NB;
    return this.B[o] <= m && m < this.B[o + 1];
  };
  // The moment each pixel column shows: where the banded bytes are highest.
  Device.prototype.moments = function (w) {
    var ev = this.ev, a = this.view[0], span = this.view[1] - this.view[0];
    var k = 0, tot = 0, out = new Float64Array(w);
    for (var c = 0; c < w; c++) {
      var lo = a + span * c / w, hi = a + span * (c + 1) / w;
      while (k < ev.length && ev[k][0] <= lo) tot += ev[k++][1];
      var best = tot, m = lo;
      while (k < ev.length && ev[k][0] < hi) {
        var x = ev[k][0];
        while (k < ev.length && ev[k][0] === x) tot += ev[k++][1];
        if (tot > best) { best = tot; m = x; }
      }
      out[c] = m;
    }
    return out;
  };
  Device.prototype.minBytes = function () {
    if (this.whole >= this.n) return 0;
    var s = [];
    for (var i = 0; i < this.n; i++) s.push(this.B[i * NB + 3]);
    s.sort(function (a, b) { return b - a; });
    return s[this.whole] + 1e-9;
  };
  // The merged blocks' bytes at m: their highest in m's bucket; past the
  // last bucket, the level at the end (the series' last value).
  Device.prototype.smallAt = function (m) {
    var s = this.small;
    if (!s.length) return 0;
    var c = Math.floor((m - this.smallX0) / this.smallDx);
    return s[Math.max(0, Math.min(s.length - 1, c))];
  };
  // Per column: the moment, the merged bytes and the bands bottom up.  The
  // moments only grow from column to column, so the live blocks are kept
  // as the sweep goes: each column costs what is live there.
  Device.prototype.layout = function (w) {
    var ms = this.moments(w), min = this.minBytes(), cols = [], top = 1;
    var order = this.byAlloc, k = 0, live = [], self = this;
    for (var c = 0; c < w; c++) {
      var m = ms[c], merged = this.smallAt(m), bands = [], sum;
      while (k < order.length && this.B[order[k] * NB] <= m) live.push(order[k++]);
      live = live.filter(function (i) { return self.live(i, m); });
      for (var q = 0; q < live.length; q++) {
        var i = live[q];
        if (this.B[i * NB + 3] < min) merged += this.B[i * NB + 3]; else bands.push(i);
      }
      sum = merged;
      for (var j = 0; j < bands.length; j++) sum += this.B[bands[j] * NB + 3];
      cols.push({ m: m, merged: merged, bands: bands, total: sum });
      if (sum > top) top = sum;
    }
    this.cols = cols;
    this.top = top * 1.05;
  };

  // Draw this timeline and those of its group (two runs on one axis) on
  // one byte scale: the highest column of any of them sets the top.
  Device.prototype.draw = function () {
    var vs = this.group(), top = 1, k;
    for (k = 0; k < vs.length; k++) {
      vs[k].layout(vs[k].root.querySelector('canvas.bands').width - PAD_L);
      top = Math.max(top, vs[k].top);
    }
    for (k = 0; k < vs.length; k++) {
      vs[k].top = top;
      vs[k].paint();
    }
  };
  Device.prototype.paint = function () {
    var cv = this.root.querySelector('canvas.bands'), g = cv.getContext('2d');
    var W = cv.width - PAD_L, H = cv.height - PAD_B - PAD_T;
    g.clearRect(0, 0, cv.width, cv.height);
    g.fillStyle = '#fff';
    g.fillRect(0, 0, cv.width, cv.height);
    // One path per colour (setting a fill style per rectangle is what costs),
    // and a band that keeps its place over neighbouring columns is one rectangle.
    var paths = {}, px = H / this.top, edges = new Path2D(), self = this;
    var x0 = new Int32Array(this.n), last = new Int32Array(this.n).fill(-2), ys = new Float64Array(this.n);
    function flush(i) {
      var h = self.B[i * NB + 3] * px, st = self.B[i * NB + 6], w = last[i] - x0[i] + 1;
      var colour = st >= 0 ? self.colours[st] : '#7a8fa6';
      (paths[colour] || (paths[colour] = new Path2D())).rect(PAD_L + x0[i], ys[i] - h, w, h);
      if (h >= 4) edges.rect(PAD_L + x0[i], ys[i] - h, w, 1); // an edge between bands
    }
    // Bands thinner than a pixel cannot be told apart: a run of them is one
    // rectangle per pixel of height, in the colour of its largest band.
    var thinH = 0, thinTop = 0, thinBig = -1;
    function thinFlush(c) {
      var st = self.B[thinBig * NB + 6], colour = st >= 0 ? self.colours[st] : '#7a8fa6';
      (paths[colour] || (paths[colour] = new Path2D())).rect(PAD_L + c, thinTop, 1, thinH);
      thinH = 0;
      thinBig = -1;
    }
    var grey = new Path2D();
    for (var c = 0; c < W; c++) {
      var col = this.cols[c], y = H + PAD_T;
      if (col.merged > 0) {
        grey.rect(PAD_L + c, y - col.merged * px, 1, col.merged * px);
        y -= col.merged * px;
      }
      for (var j = 0; j < col.bands.length; j++) {
        var i = col.bands[j], bh = this.B[i * NB + 3] * px;
        if (bh < 1) {
          if (thinBig < 0 || this.B[i * NB + 3] > this.B[thinBig * NB + 3]) thinBig = i;
          thinH += bh;
          y -= bh;
          thinTop = y;
          if (thinH >= 1) thinFlush(c);
          continue;
        }
        if (thinBig >= 0) thinFlush(c);
        if (last[i] !== c - 1 || Math.abs(ys[i] - y) > 0.01) {
          if (last[i] >= 0) flush(i);
          x0[i] = c;
          ys[i] = y;
        }
        last[i] = c;
        y -= bh;
      }
      if (thinBig >= 0) thinFlush(c);
    }
    for (var k = 0; k < this.n; k++) if (last[k] >= 0) flush(k);
    g.fillStyle = '#b8b8b8';
    g.fill(grey);
    for (var colour in paths) {
      g.fillStyle = colour;
      g.fill(paths[colour]);
    }
    g.fillStyle = 'rgba(255,255,255,0.7)';
    g.fill(edges);
    this.axes(g, W, H);
    this.marksDraw(g, W, H);
    this.say();
  };
  Device.prototype.xpx = function (x, W) {
    return PAD_L + (x - this.view[0]) / (this.view[1] - this.view[0]) * W;
  };
  Device.prototype.axes = function (g, W, H) {
    g.strokeStyle = '#888';
    g.fillStyle = '#555';
    g.font = '11px system-ui,sans-serif';
    g.beginPath();
    g.moveTo(PAD_L, PAD_T);
    g.lineTo(PAD_L, PAD_T + H);
    g.lineTo(PAD_L + W, PAD_T + H);
    g.stroke();
    for (var k = 0; k <= 4; k++) {
      var yb = this.top / 1.05 * k / 4, y = PAD_T + H - yb * H / this.top;
      g.fillText(bytes(Math.round(yb)), 2, y + 4);
      var x = this.view[0] + (this.view[1] - this.view[0]) * k / 4;
      g.textAlign = k === 0 ? 'left' : k === 4 ? 'right' : 'center';
      g.fillText(this.at(this.time ? x : Math.round(x)), PAD_L + W * k / 4, PAD_T + H + 15);
      g.textAlign = 'left';
    }
  };
  Device.prototype.marksDraw = function (g, W, H) {
    var all = this.marks.slice();
    if (this.moment !== null) all.push(['picked', this.moment]);
    for (var k = 0; k < all.length; k++) {
      var x = this.xpx(all[k][1], W);
      if (x < PAD_L || x > PAD_L + W) continue;
      g.strokeStyle = all[k][0] === 'picked' ? '#000' : /^OOM/.test(all[k][0]) ? '#d00' : '#333';
      g.setLineDash([3, 2]);
      g.beginPath();
      g.moveTo(x + 0.5, PAD_T);
      g.lineTo(x + 0.5, PAD_T + H);
      g.stroke();
      g.setLineDash([]);
    }
  };
  Device.prototype.say = function () {
    var p = this.root.querySelector('.bands-merged'), min = this.minBytes(), nb = 0, nm = 0;
    for (var i = 0; i < this.n; i++) {
      if (this.B[i * NB + 1] <= this.B[i * NB]) continue;
      if (this.B[i * NB + 3] < min) nm++; else nb++;
    }
    p.textContent = nb + ' allocations drawn as bands' +
      (nm ? '; ' + nm + ' smaller ones (under ' + bytes(Math.ceil(min)) + ') merged into the grey band' : '') +
      '. Showing ' + this.at(this.view[0]) + ' to ' + this.at(this.view[1]) + '.';
  };
  Device.prototype.hit = function (cx, cy) {
    var cv = this.root.querySelector('canvas.bands'), r = cv.getBoundingClientRect();
    var px = (cx - r.left) * cv.width / r.width, py = (cy - r.top) * cv.height / r.height;
    var c = Math.floor(px - PAD_L), H = cv.height - PAD_B - PAD_T;
    if (!this.cols || c < 0 || c >= this.cols.length) return null;
    var col = this.cols[c], b = (PAD_T + H - py) * this.top / H;
    if (b < 0 || b > col.total) return { col: col, c: c };
    if (b < col.merged) return { col: col, c: c, merged: true };
    var acc = col.merged;
    for (var j = 0; j < col.bands.length; j++) {
      acc += this.B[col.bands[j] * NB + 3];
      if (b < acc) return { col: col, c: c, block: col.bands[j] };
    }
    return { col: col, c: c };
  };
  Device.prototype.blockText = function (i, what) {
    var o = i * NB, B = this.B, st = B[o + 6], s = st >= 0 ? this.stacks[st] : null;
    return (what ? what + ': ' : '') + (s ? s[0] : '(no call stack)') +
      '\n' + bytes(B[o + 3]) + ' (' + B[o + 3] + ' B), requested ' + B[o + 4] + ' B' +
      '\naddress 0x' + B[o + 5].toString(16) +
      '\nallocated at ' + this.at(B[o]) +
      (B[o + 1] === Infinity ? ', never freed' : ', freed at ' + this.at(B[o + 1])) +
      (s ? '\ncall stack, innermost first:\n' + s[1] : '');
  };
  Device.prototype.hover = function (e) {
    var h = this.hit(e.clientX, e.clientY);
    if (!h || (h.block === undefined && !h.merged)) { tip.hidden = true; return; }
    if (h.merged)
      showTip('merged smaller allocations: ' + bytes(h.col.merged) + ' at ' + this.at(h.col.m),
              e.clientX, e.clientY);
    else
      showTip(this.blockText(h.block, ''), e.clientX, e.clientY);
  };

  // This timeline and those of its group, in page order.
  var views = [];
  Device.prototype.group = function () {
    var g = this.root.getAttribute('data-group'), out = [];
    for (var k = 0; k < views.length; k++) {
      var o = views[k];
      if (o === this || (g && o.root.getAttribute('data-group') === g)) out.push(o);
    }
    return out.length ? out : [this];
  };
  // Zoom to view, and the timelines of the same group with it.
  Device.prototype.zoom = function (view) {
    var vs = this.group();
    for (var k = 0; k < vs.length; k++) vs[k].view = view.slice();
    this.draw();
  };
  // Brushing zooms; a click picks the moment of its column.
  Device.prototype.wire = function () {
    var d = this, cv = d.root.querySelector('canvas.bands'), brush = d.root.querySelector('.brush');
    var start = null;
    function cx(e) { var r = cv.getBoundingClientRect(); return (e.clientX - r.left) * cv.width / r.width; }
    cv.addEventListener('mousemove', function (e) {
      d.hover(e);
      if (start === null) return;
      var a = Math.min(start, cx(e)), b = Math.max(start, cx(e)), k = cv.getBoundingClientRect().width / cv.width;
      brush.hidden = false;
      brush.style.left = a * k + 'px';
      brush.style.width = (b - a) * k + 'px';
    });
    cv.addEventListener('mouseleave', function () { tip.hidden = true; });
    cv.addEventListener('mousedown', function (e) { start = cx(e); e.preventDefault(); });
    window.addEventListener('mouseup', function (e) {
      if (start === null) return;
      var end = cx(e), W = cv.width - PAD_L, a = Math.min(start, end), b = Math.max(start, end);
      var s = d.view[1] - d.view[0], v0 = d.view[0];
      brush.hidden = true;
      start = null;
      if (b - a >= 4) {
        a = Math.max(0, a - PAD_L); b = Math.min(W, b - PAD_L);
        if (b > a) d.zoom([v0 + s * a / W, v0 + s * b / W]);
      } else {
        var h = d.hit(e.clientX, e.clientY);
        if (h) d.pick(h.col.m, 'picked at ' + d.at(h.col.m));
      }
    });
    d.root.querySelector('.reset').addEventListener('click', function () { d.zoom([0, d.x1]); });
    d.root.querySelector('.detail').addEventListener('change', function (e) {
      var v = +e.target.value;
      d.whole = v > 0 ? v : d.n;
      d.draw();
    });
    var sel = d.root.querySelector('.moment'), cs = d.root.querySelector('canvas.state');
    if (!sel || !cs) return; // the page holds no allocator state for this device
    sel.addEventListener('change', function () {
      var m = d.marks[+sel.value];
      if (m) d.pick(m[1], m[0]);
    });
    cs.addEventListener('mousemove', function (e) { d.stateHover(e); });
    cs.addEventListener('mouseleave', function () { tip.hidden = true; });
  };

  // --- the allocator state at a moment ------------------------------------
  Device.prototype.state = function (m) {
    var S = this.S, B = this.B, segs = [], i, o;
    for (i = 0; i < S.length / NS; i++) {
      o = i * NS;
      if (S[o] <= m && m < S[o + 1]) segs.push({ addr: S[o + 2], size: S[o + 3], blocks: [] });
    }
    segs.sort(function (a, b) { return a.addr - b.addr; });
    var st = { m: m, segs: segs, reserved: 0, live: 0, pending: 0, free: 0, hole: 0, holeSeg: -1, holeAt: 0 };
    for (i = 0; i < this.n; i++) {
      o = i * NB;
      if (!(B[o] <= m && m < B[o + 2])) continue;
      var s = find(segs, B[o + 5]);
      var pend = !(m < B[o + 1]);
      if (pend) st.pending += B[o + 3]; else st.live += B[o + 3];
      if (s) s.blocks.push(i);
    }
    for (var k = 0; k < segs.length; k++) this.holes(segs[k], st, k);
    st.free = st.reserved - st.live;
    return st;
  };
  function find(segs, addr) {
    var lo = 0, hi = segs.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1, s = segs[mid];
      if (addr < s.addr) hi = mid - 1;
      else if (addr >= s.addr + s.size) lo = mid + 1;
      else return s;
    }
    return null;
  }
  Device.prototype.holes = function (s, st, k) {
    var B = this.B, at = s.addr, end = s.addr + s.size;
    st.reserved += s.size;
    s.blocks.sort(function (a, b) { return B[a * NB + 5] - B[b * NB + 5]; });
    for (var j = 0; j <= s.blocks.length; j++) {
      var next = j < s.blocks.length ? B[s.blocks[j] * NB + 5] : end;
      if (next - at > st.hole) { st.hole = next - at; st.holeSeg = k; st.holeAt = at; }
      if (j < s.blocks.length) at = Math.max(at, next + B[s.blocks[j] * NB + 3]);
    }
  };
  Device.prototype.pick = function (m, label) {
    this.moment = m;
    this.draw();
    if (!this.root.querySelector('canvas.state')) return;
    this.st = this.state(m);
    this.stateDraw(label);
  };
  var ROW_H = 18, ROWS = 12;
  Device.prototype.stateDraw = function (label) {
    var cv = this.root.querySelector('canvas.state'), g = cv.getContext('2d'), st = this.st;
    var W = cv.width, per = Math.max(1, st.reserved / (W * ROWS)), B = this.B;
    var fig = this.root.querySelector('.state-figures');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, W, cv.height);
    this.per = per;
    var off = 0;
    for (var k = 0; k < st.segs.length; k++) {
      var s = st.segs[k];
      this.span(g, off, s.size, per, '#eeeeee');
      for (var j = 0; j < s.blocks.length; j++) {
        var i = s.blocks[j], o = i * NB, pend = !(st.m < B[o + 1]);
        this.span(g, off + B[o + 5] - s.addr, B[o + 3], per,
                  pend ? '#f0a030' : B[o + 6] >= 0 ? this.colours[B[o + 6]] : '#7a8fa6');
      }
      if (k === st.holeSeg) this.span(g, off + st.holeAt - s.addr, st.hole, per, null);
      s.off = off;
      this.span(g, off, 0, per, '#000');
      off += s.size;
    }
    var fields = { moment: st.m, reserved: st.reserved, live: st.live, pending: st.pending,
                   free: st.free, hole: st.hole };
    for (var f in fields) fig.setAttribute('data-' + f, fields[f]);
    fig.textContent = label + ': ' + st.segs.length + ' segments, reserved ' + bytes(st.reserved) +
      ' (' + st.reserved + ' B); live ' + st.live + ' B; pending free ' + st.pending + ' B; ' +
      'free in reserved ' + bytes(st.free) + ' (' + st.free + ' B); largest hole ' +
      bytes(st.hole) + ' (' + st.hole + ' B), outlined in red.';
  };
  // Fill (or outline, colour null) bytes [a, a+n) of the wrapped address rows.
  Device.prototype.span = function (g, a, n, per, colour) {
    var W = g.canvas.width, x = a / per, w = Math.max(n / per, colour === '#000' ? 0 : 0.5);
    while (w > 0 || colour === '#000') {
      var row = Math.floor(x / W), cx = x - row * W, part = Math.min(w, W - cx);
      if (row >= ROWS) return;
      if (colour === '#000') { g.fillStyle = '#000'; g.fillRect(cx, row * ROW_H, 1, ROW_H - 2); return; }
      if (colour === null) { g.strokeStyle = '#d00'; g.lineWidth = 2; g.strokeRect(cx + 1, row * ROW_H + 1, Math.max(part - 2, 1), ROW_H - 4); }
      else { g.fillStyle = colour; g.fillRect(cx, row * ROW_H, part, ROW_H - 2); }
      x += part; w -= part;
    }
  };
  Device.prototype.stateHover = function (e) {
    var cv = this.root.querySelector('canvas.state'), r = cv.getBoundingClientRect(), st = this.st;
    if (!st) return;
    var px = (e.clientX - r.left) * cv.width / r.width, py = (e.clientY - r.top) * cv.height / r.height;
    var off = (Math.floor(py / ROW_H) * cv.width + px) * this.per, B = this.B;
    for (var k = 0; k < st.segs.length; k++) {
      var s = st.segs[k];
      if (off < s.off || off >= s.off + s.size) continue;
      var addr = s.addr + off - s.off;
      for (var j = 0; j < s.blocks.length; j++) {
        var o = s.blocks[j] * NB;
        if (B[o + 5] <= addr + this.per && addr < B[o + 5] + B[o + 3])
          return showTip(this.blockText(s.blocks[j], st.m < B[o + 1] ? 'live' : 'pending free'), e.clientX, e.clientY);
      }
      return showTip('free, in the segment at 0x' + s.addr.toString(16) + ' of ' + bytes(s.size) +
                     (k === st.holeSeg ? '\nthe largest hole: ' + bytes(st.hole) : ''), e.clientX, e.clientY);
    }
    tip.hidden = true;
  };

  var roots = document.querySelectorAll('div.bands-view'), i, d;
  for (i = 0; i < roots.length; i++) views.push(new Device(roots[i]));
  for (i = 0; i < roots.length; i++) {
    d = views[i];
    roots[i].hidden = false;
    d.wire();
    if (!d.cols) d.draw(); // a group is drawn once, with its first view
    if (d.marks.length && roots[i].querySelector('canvas.state')) d.pick(d.marks[0][1], d.marks[0][0]);
  }
})();
