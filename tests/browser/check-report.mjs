#!/usr/bin/env node
// tests/browser/check-report.mjs - open a 'memprof report' HTML file from disk
// in headless Chromium and check it as a person would see it: nothing
// requested from anywhere, no console or page error, every chart drawn (with
// and without JavaScript), the icicle's and the markers' tooltips shown on
// hover, a full-page screenshot with pixels in every chart; with --hostile,
// that strings from a hostile trace run nothing and show literally.
// Prints one ok / not ok line per check; exits 0 when all passed, 1 if not,
// 2 on bad usage.  The report's contract: tests/browser/README.md.
//
// usage: node check-report.mjs --report FILE [--charts memory,frag,peak,...]
//   [--absent pools] [--tip TEXT]... [--oom] [--findings]
//   [--hostile STRINGS.json] [--screenshot OUT.png] [--hover-timeout MS]
//   [--views] [--band-tip TEXT]... [--brush] [--pick-out FILE [--pick-at FRACTION]]
//   [--all-frames FRAME] [--axis time|events]
// --views and the options after it check the interactive views (views.mjs).
import fs from 'node:fs';
import { launch, openReport, measurePng, reporter, EVENT_TIMEOUT_MS } from './lib.mjs';
import { checkViews, checkAllFrames } from './views.mjs';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
let hoverTimeoutMs = 10000; // --hover-timeout: shorter only where a failure is expected

function parseArgs(argv) {
	const o = { charts: [], absent: [], tips: [], oom: false, findings: false, views: false,
		bandTips: [], brush: false, pickAt: 0.5 };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i], v = () => {
			if (i + 1 >= argv.length)
				usage(`${a} needs a value`);
			return argv[++i];
		};
		if (a === '--report') o.report = v();
		else if (a === '--charts') o.charts = v().split(',').filter(Boolean);
		else if (a === '--absent') o.absent = v().split(',').filter(Boolean);
		else if (a === '--tip') o.tips.push(v());
		else if (a === '--oom') o.oom = true;
		else if (a === '--findings') o.findings = true;
		else if (a === '--hostile') o.hostile = v();
		else if (a === '--screenshot') o.screenshot = v();
		else if (a === '--hover-timeout') hoverTimeoutMs = Number(v());
		else if (a === '--views') o.views = true;
		else if (a === '--band-tip') o.bandTips.push(v());
		else if (a === '--brush') o.brush = true;
		else if (a === '--pick-out') o.pickOut = v();
		else if (a === '--pick-at') o.pickAt = Number(v());
		else if (a === '--all-frames') o.allFrames = v();
		else if (a === '--axis') o.axis = v();
		else usage(`unknown argument '${a}'`);
	}
	if (!o.report)
		usage('no --report given');
	return o;
}

function usage(msg) {
	console.error(`check-report: ${msg}`);
	console.error('usage: node check-report.mjs --report FILE [--charts LIST] [--absent LIST] ' +
		'[--tip TEXT]... [--oom] [--findings] [--hostile FILE.json] [--screenshot OUT.png]');
	process.exit(2);
}

/* Every svg.chart: its name, device, box in the page, and drawn elements
 * (shapes with a non-empty box, not hidden). */
function chartsOf(page) {
	return page.$$eval('svg.chart', (svgs) => svgs.filter((svg) => !svg.closest('details:not([open])')).map((svg) => {
		const r = svg.getBoundingClientRect();
		let drawn = 0;
		for (const el of svg.querySelectorAll('path, rect, line, polyline, polygon, circle, ellipse')) {
			const cs = getComputedStyle(el);
			if (cs.display === 'none' || cs.visibility === 'hidden')
				continue;
			const b = el.getBBox();
			if (b.width > 0 || b.height > 0)
				drawn++;
		}
		return {
			name: svg.getAttribute('data-chart'),
			device: svg.getAttribute('data-device'),
			box: { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height },
			drawn,
		};
	}));
}

/* What the page holds that could load or run something. */
function structureOf(page) {
	return page.evaluate(() => {
		const all = [...document.querySelectorAll('*')];
		const handlers = [];
		for (const el of all)
			for (const at of el.attributes)
				if (/^on/i.test(at.name))
					handlers.push(`<${el.localName} ${at.name}>`);
		const external = [...document.querySelectorAll(
			'link, script[src], iframe, frame, object, embed, base, audio, video, source, track, form')]
			.map((e) => e.outerHTML.slice(0, 120));
		const images = [...document.querySelectorAll('img, image')]
			.map((e) => e.getAttribute('src') || e.getAttribute('href') || '')
			.filter((s) => !s.startsWith('data:'));
		const csp = document.querySelector('meta[http-equiv="Content-Security-Policy" i]');
		return {
			scripts: document.querySelectorAll('script').length,
			handlers,
			external,
			images,
			csp: csp ? csp.getAttribute('content') : null,
			tooltip: !!document.getElementById('tooltip'),
		};
	});
}

/* The tooltip's text once it shows and holds want (whitespace collapsed), or
 * null with what it showed instead. */
async function tooltipHolding(page, want) {
	try {
		await page.waitForFunction((want) => {
			const t = document.getElementById('tooltip');
			if (!t)
				return false;
			const cs = getComputedStyle(t);
			if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0')
				return false;
			return t.innerText.replace(/\s+/g, ' ').includes(want);
		}, want, { timeout: hoverTimeoutMs, polling: 'raf' });
		return { ok: true, text: await page.$eval('#tooltip', (t) => t.innerText) };
	} catch (e) {
		const text = await page.$eval('#tooltip', (t) => `[display ${getComputedStyle(t).display}] ${t.innerText}`)
			.catch(() => '(no #tooltip)');
		return { ok: false, text };
	}
}

const squash = (s) => s.replace(/\s+/g, ' ').trim();

/* A point of el's box (viewport coordinates) where el or one of its
 * descendants is the topmost element, as a person aims at what they see:
 * the middle first, then a grid over the box.  null when none is. */
async function hittablePoint(el, box) {
	return el.evaluate((e, box) => {
		const pts = [[0.5, 0.5]];
		for (const fy of [0.1, 0.3, 0.5, 0.7, 0.9])
			for (const fx of [0.5, 0.1, 0.3, 0.7, 0.9])
				pts.push([fx, fy]);
		for (const [fx, fy] of pts) {
			const x = box.x + fx * box.width, y = box.y + fy * box.height;
			const top = document.elementFromPoint(x, y);
			if (top && (top === e || e.contains(top)))
				return { x, y };
		}
		return null;
	}, box);
}

/* Move the mouse onto el as a person would; the tooltip must show el's
 * data-tip.  Returns { ok, text, detail }. */
async function hover(page, el) {
	await el.scrollIntoViewIfNeeded().catch(() => {});
	const box = await el.boundingBox();
	if (!box)
		return { ok: false, detail: 'the element has no box on the page' };
	const tip = squash(await el.getAttribute('data-tip'));
	const p = await hittablePoint(el, box);
	if (!p) {
		const under = await page.evaluate(({ x, y }) => {
			const e = document.elementFromPoint(x, y);
			return e ? e.outerHTML.slice(0, 160) : 'nothing';
		}, { x: box.x + box.width / 2, y: box.y + box.height / 2 });
		return { ok: false, detail: `no point of the element is on top (data-tip: ${tip})\n` +
			`on top at its middle: ${under}` };
	}
	await page.mouse.move(p.x, p.y, { steps: 2 });
	const r = await tooltipHolding(page, tip);
	if (!r.ok)
		r.detail = `data-tip: ${tip}\ntooltip: ${r.text}\nmouse at ${p.x.toFixed(1)},${p.y.toFixed(1)}`;
	return r;
}

async function checkHover(t, page, o) {
	const cells = await page.$$('svg[data-chart=peak] [data-tip]');
	if (!o.absent.includes('peak'))
		t.ok(cells.length > 0, 'the icicle has cells with data-tip', `${cells.length} cells`);
	for (const want of o.tips) {
		let cell = null;
		for (const c of cells)
			if ((await c.getAttribute('data-tip')).includes(want)) {
				cell = c;
				break;
			}
		if (!t.ok(cell, `an icicle cell's data-tip names '${want}'`))
			continue;
		const r = await hover(page, cell);
		t.ok(r.ok, `hovering that cell shows its stack in #tooltip`, r.detail);
		if (r.ok)
			t.ok(squash(r.text).includes(want), `#tooltip holds '${want}'`, r.text);
	}
	if (!o.tips.length && cells.length) {
		const r = await hover(page, cells[cells.length - 1]);
		t.ok(r.ok, 'hovering an icicle cell shows its data-tip in #tooltip', r.detail);
	}
	for (const [cls, wanted] of [['peak-marker', o.charts.includes('memory')], ['oom-marker', o.oom]]) {
		if (!wanted)
			continue;
		const m = await page.$$(`svg.chart .${cls}[data-tip]`);
		if (!t.ok(m.length > 0, `a .${cls} with data-tip is drawn`))
			continue;
		const r = await hover(page, m[0]);
		t.ok(r.ok, `hovering the .${cls} shows its tip`, r.detail);
	}
	const charts = await chartsOf(page);
	for (const c of charts.filter((c) => c.name === 'memory'))
		t.ok(await page.$(`svg[data-chart=memory][data-device="${c.device}"] .peak-marker`),
			`the memory chart of device ${c.device} marks its peak`);
}

async function checkCharts(t, page, o, label) {
	const charts = await chartsOf(page);
	t.ok(charts.length > 0, `${label}: the page has svg.chart elements`, `${charts.length}`);
	for (const c of charts)
		t.ok(c.drawn > 0 && c.box.width > 0 && c.box.height > 0,
			`${label}: chart '${c.name}'${c.device !== null ? ` (device ${c.device})` : ''} has drawn elements`,
			c);
	for (const name of o.charts)
		t.ok(charts.some((c) => c.name === name), `${label}: a '${name}' chart is present`,
			charts.map((c) => c.name).join(','));
	for (const name of o.absent)
		t.ok(!charts.some((c) => c.name === name), `${label}: no '${name}' chart`);
	return charts;
}

async function checkScreenshot(t, context, page, charts, out) {
	await page.mouse.move(0, 0);
	const png = await page.screenshot({ fullPage: true, animations: 'disabled' });
	if (out)
		fs.writeFileSync(out, png);
	const m = await measurePng(context, png, [
		{ x: 0, y: 0, width: 1e9, height: 1e9 },
		...charts.map((c) => c.box),
	]);
	const page_ = m.boxes[0];
	t.ok(m.width > 0 && m.height > 0 && page_.nonWhite > 0.01 * page_.pixels && page_.colours >= 8,
		`the screenshot (${m.width}x${m.height}) is not blank`, page_);
	charts.forEach((c, i) => {
		const b = m.boxes[i + 1];
		t.ok(b.pixels > 0 && b.nonWhite >= 0.005 * b.pixels && b.colours >= 3,
			`the screenshot shows chart '${c.name}'${c.device !== null ? ` (device ${c.device})` : ''} ` +
			`(${b.nonWhite} of ${b.pixels} pixels not white, ${b.colours} colours)`, b);
	});
}

/* Hover and focus every element with a data-tip: each tooltip must show the
 * attribute's text literally; nothing may run. */
async function checkHostile(t, page, log, strings) {
	const seen = new Set();
	const els = await page.$$('[data-tip]');
	let shown = 0, literal = 0;
	const bad = [];
	for (const el of els) {
		const r = await hover(page, el);
		if (r.ok) {
			shown++;
			seen.add(r.text);
		}
		// the events a hover or a keyboard user causes, whatever lies on top of el
		const text = await el.evaluate((e) => {
			e.dispatchEvent(new MouseEvent('mouseover', { bubbles: true, clientX: 5, clientY: 5 }));
			e.dispatchEvent(new FocusEvent('focusin', { bubbles: true }));
			const t = document.getElementById('tooltip');
			return { tip: e.getAttribute('data-tip'), shown: t ? t.innerText : '' };
		});
		seen.add(text.shown);
		if (squash(text.shown) === squash(text.tip))
			literal++;
		else
			bad.push(`tip ${JSON.stringify(text.tip)} shown as ${JSON.stringify(text.shown)}`);
	}
	t.ok(els.length > 0 && literal === els.length,
		`every one of ${els.length} tooltips shows its data-tip as text`, bad.slice(0, 5).join('\n'));
	t.note(`${shown} of ${els.length} data-tip elements showed their tip under the mouse`);
	const pwned = await page.evaluate(() => [window.__pwned, typeof parent.__pwned, document.title]);
	t.ok(pwned[0] === undefined && pwned[1] === 'undefined', 'nothing set window.__pwned', pwned);
	t.ok(log.dialogs.length === 0, 'no dialog or popup opened', log.dialogs);
	const text = await page.evaluate(() => {
		const parts = [document.body.innerText, document.title];
		for (const e of document.querySelectorAll('svg text, svg title'))
			parts.push(e.textContent);
		return parts.join('\n');
	});
	const shownText = [text, ...seen].join('\n');
	for (const s of strings)
		t.ok(shownText.includes(s), `the hostile string ${JSON.stringify(s)} shows literally as text`);
}

async function main() {
	const o = parseArgs(process.argv.slice(2));
	const t = reporter(`check-report ${o.report}`);
	const hostile = o.hostile ? JSON.parse(fs.readFileSync(o.hostile, 'utf8')) : null;
	if (!fs.existsSync(o.report))
		usage(`no report '${o.report}'`);
	const b = await launch();
	try {
		const { page, log } = await openReport(b.context, o.report);
		await page.evaluate(() => document.fonts.ready);
		const s = await structureOf(page);
		t.ok(s.csp === CSP, 'the Content-Security-Policy meta is the contract\'s', s.csp);
		t.ok(s.scripts <= 1, 'at most one script element', `${s.scripts}`);
		t.ok(s.external.length === 0 && s.images.length === 0, 'no element that loads a resource',
			[...s.external, ...s.images]);
		t.ok(s.handlers.length === 0, 'no inline event handler attribute', s.handlers);
		t.ok(s.tooltip, 'the page has #tooltip');
		const charts = await checkCharts(t, page, o, 'with JavaScript');
		if (o.findings)
			t.ok(await page.$$eval('table.findings tr', (r) => r.filter((x) => x.querySelector('td')).length) > 0,
				'the lifetime findings table has rows');
		await checkHover(t, page, o);
		if (o.views)
			await checkViews(t, page, { ...o, hostile });
		if (o.allFrames)
			await checkAllFrames(t, page, o.allFrames);
		await checkScreenshot(t, b.context, page, charts, o.screenshot);
		if (hostile)
			await checkHostile(t, page, log, hostile);
		t.ok(log.requests.length === 0 && log.refused.length === 0,
			'no request but the report file itself', [...log.requests, ...log.refused]);
		t.ok(log.consoleErrors.length === 0, 'no console error', log.consoleErrors);
		t.ok(log.pageErrors.length === 0, 'no page error', log.pageErrors);
		await page.close();
		// The same page without JavaScript: everything but the tooltip still shows.
		const nojs = await b.newContext({ javaScriptEnabled: false });
		const { page: p2, log: log2 } = await openReport(nojs, o.report);
		await checkCharts(t, p2, o, 'without JavaScript');
		t.ok(log2.requests.length === 0 && log2.consoleErrors.length === 0 && log2.pageErrors.length === 0,
			'without JavaScript: no request, no console or page error',
			[...log2.requests, ...log2.consoleErrors, ...log2.pageErrors]);
	} finally {
		await b.close();
	}
	return t.finish();
}

main().then((rc) => process.exit(rc), (e) => {
	console.log(`not ok - the check could not run: ${e && e.stack ? e.stack : e}`);
	process.exit(1);
});
