#!/usr/bin/env node
// tests/browser/screenshot.mjs - a PNG of the top of a report for the README:
// the page at a given width, clipped to the body's width and from its top
// to the bottom of the first element matching --until (the first icicle by
// default) or --max-height pixels, optionally with the mouse on an icicle
// cell of a given row so its tooltip shows a stack.  Fails when the page
// logs an error or requests anything.
//
// usage: node screenshot.mjs --report FILE --out PNG [--width 1280]
//   [--until SELECTOR] [--max-height 1400] [--hover-row N] [--element SELECTOR]
// --element: a PNG of the first element matching SELECTOR instead (the
// active memory timeline and allocator state: div.bands-view).
import fs from 'node:fs';
import { launch, openReport } from './lib.mjs';

function arg(name, def) {
	const i = process.argv.indexOf(name);
	return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

/* Put the mouse on the widest icicle cell of row `row` (0: the root), so
 * its tooltip shows a short stack inside the picture. */
async function hoverCell(page, row, maxY) {
	const cell = await page.evaluateHandle(({ row, maxY }) => {
		const cells = [...document.querySelectorAll('svg[data-chart=peak] [data-tip]')]
			.map((e) => ({ e, b: e.getBoundingClientRect() }))
			.filter((c) => c.b.width >= 60 && c.b.bottom < maxY);
		const tops = [...new Set(cells.map((c) => Math.round(c.b.top)))].sort((a, b) => a - b);
		const inRow = cells.filter((c) => Math.round(c.b.top) === tops[Math.min(row, tops.length - 1)]);
		inRow.sort((a, b) => b.b.width - a.b.width);
		return inRow.length ? inRow[0].e : null;
	}, { row, maxY });
	const el = cell.asElement();
	if (!el)
		return false;
	const box = await el.boundingBox();
	await page.mouse.move(box.x + Math.min(60, box.width / 2), box.y + box.height / 2);
	await page.waitForFunction(() => {
		const t = document.getElementById('tooltip');
		return t && getComputedStyle(t).display !== 'none' && t.innerText.trim() !== '';
	});
	return true;
}

async function main() {
	const report = arg('--report'), out = arg('--out'), width = Number(arg('--width', '1280'));
	const until = arg('--until', 'svg.chart[data-chart=peak]');
	const maxHeight = Number(arg('--max-height', '1400')), hoverRow = arg('--hover-row');
	if (!report || !out) {
		console.error('usage: node screenshot.mjs --report FILE --out PNG [--width N] ' +
			'[--until SELECTOR] [--max-height N] [--hover-row N]');
		return 2;
	}
	const b = await launch({ width, height: 900 });
	try {
		const { page, log } = await openReport(b.context, report);
		await page.evaluate(() => document.fonts.ready);
		if (arg('--element')) {
			const png = await (await page.$(arg('--element'))).screenshot({ animations: 'disabled' });
			fs.writeFileSync(out, png);
			const problems = [...log.consoleErrors, ...log.pageErrors, ...log.requests];
			if (problems.length)
				throw new Error(`the page had problems: ${problems.join('; ')}`);
			console.log(`${out}: ${png.length} bytes`);
			return 0;
		}
		// from the top of the page to the bottom of `until`, at most maxHeight,
		// and across the body's content with a margin
		const r = await page.$eval(until, (e) => {
			const body = document.body.getBoundingClientRect();
			return { bottom: e.getBoundingClientRect().bottom + window.scrollY, left: body.left, right: body.right };
		});
		const height = Math.min(maxHeight, Math.ceil(r.bottom + 16));
		await page.setViewportSize({ width, height });
		const x = Math.max(0, Math.floor(r.left - 8)), w = Math.min(width, Math.ceil(r.right + 8)) - x;
		if (hoverRow !== undefined && !(await hoverCell(page, Number(hoverRow), height - 40)))
			throw new Error('no icicle cell to hover');
		const png = await page.screenshot({ clip: { x, y: 0, width: w, height }, animations: 'disabled' });
		fs.writeFileSync(out, png);
		const problems = [...log.consoleErrors, ...log.pageErrors, ...log.requests];
		if (problems.length)
			throw new Error(`the page had problems: ${problems.join('; ')}`);
		console.log(`${out}: ${w}x${height}, ${png.length} bytes`);
	} finally {
		await b.close();
	}
	return 0;
}

main().then((rc) => process.exit(rc), (e) => {
	console.error(`screenshot: ${e && e.stack ? e.stack : e}`);
	process.exit(1);
});
