#!/usr/bin/env node
// tests/browser/screenshot.mjs - a PNG of the top of a report for the README:
// the page at a given width, clipped from its top to the bottom of the first
// element matching --until (the first icicle by default), optionally with
// the mouse on an icicle cell so its tooltip shows a stack.  Fails when the
// page logs an error or requests anything.
//
// usage: node screenshot.mjs --report FILE --out PNG [--width 1280]
//   [--until SELECTOR] [--hover]
import fs from 'node:fs';
import { launch, openReport } from './lib.mjs';

function arg(name, def) {
	const i = process.argv.indexOf(name);
	return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

async function hoverDeepCell(page) {
	// the widest cell of the deepest row that is still wide: a stack worth reading
	const cell = await page.evaluateHandle(() => {
		const cells = [...document.querySelectorAll('svg[data-chart=peak] [data-tip]')]
			.map((e) => ({ e, b: e.getBoundingClientRect() }))
			.filter((c) => c.b.width >= 60);
		cells.sort((a, b) => b.b.top - a.b.top || b.b.width - a.b.width);
		const c = cells[Math.floor(cells.length / 2)];
		return c ? c.e : null;
	});
	const el = cell.asElement();
	if (!el)
		return false;
	const box = await el.boundingBox();
	await page.mouse.move(box.x + Math.min(40, box.width / 2), box.y + box.height / 2);
	await page.waitForFunction(() => {
		const t = document.getElementById('tooltip');
		return t && getComputedStyle(t).display !== 'none' && t.innerText.trim() !== '';
	});
	return true;
}

async function main() {
	const report = arg('--report'), out = arg('--out'), width = Number(arg('--width', '1280'));
	const until = arg('--until', 'svg.chart[data-chart=peak]');
	if (!report || !out) {
		console.error('usage: node screenshot.mjs --report FILE --out PNG [--width N] [--until SELECTOR] [--hover]');
		return 2;
	}
	const b = await launch({ width, height: 900 });
	try {
		const { page, log } = await openReport(b.context, report);
		await page.evaluate(() => document.fonts.ready);
		const bottom = await page.$eval(until, (e) => e.getBoundingClientRect().bottom + window.scrollY);
		const height = Math.ceil(bottom + 16);
		await page.setViewportSize({ width, height });
		if (process.argv.includes('--hover') && !(await hoverDeepCell(page)))
			throw new Error('no icicle cell to hover');
		const png = await page.screenshot({ clip: { x: 0, y: 0, width, height }, animations: 'disabled' });
		fs.writeFileSync(out, png);
		const problems = [...log.consoleErrors, ...log.pageErrors, ...log.requests];
		if (problems.length)
			throw new Error(`the page had problems: ${problems.join('; ')}`);
		console.log(`${out}: ${width}x${height}, ${png.length} bytes`);
	} finally {
		await b.close();
	}
	return 0;
}

main().then((rc) => process.exit(rc), (e) => {
	console.error(`screenshot: ${e && e.stack ? e.stack : e}`);
	process.exit(1);
});
