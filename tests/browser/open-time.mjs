#!/usr/bin/env node
// tests/browser/open-time.mjs - how long Chromium takes to open a report
// from disk and draw it (navigation to the load event, then the first
// screenshot of the viewport), against a floor: a blank HTML page from the
// same directory, in the same browser session, rounds alternating.  For
// bench/report-open.sh; prints one line per open and the medians.
//
// usage: node open-time.mjs --report FILE --blank FILE [--rounds N]
import { launch, openReport } from './lib.mjs';

function arg(name, def) {
	const i = process.argv.indexOf(name);
	return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

const median = (v) => {
	const s = [...v].sort((a, b) => a - b), n = s.length;
	return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

async function openOnce(context, file) {
	const t0 = process.hrtime.bigint();
	const { page, log } = await openReport(context, file);
	const loaded = process.hrtime.bigint();
	await page.screenshot();
	const drawn = process.hrtime.bigint();
	const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
	await page.close();
	return {
		load_s: Number(loaded - t0) / 1e9,
		total_s: Number(drawn - t0) / 1e9,
		elements,
		problems: [...log.consoleErrors, ...log.pageErrors, ...log.requests],
	};
}

async function main() {
	const report = arg('--report'), blank = arg('--blank'), rounds = Number(arg('--rounds', '5'));
	if (!report || !blank || !(rounds > 0)) {
		console.error('usage: node open-time.mjs --report FILE --blank FILE [--rounds N]');
		return 2;
	}
	const b = await launch();
	const times = { blank: [], report: [], blankLoad: [], reportLoad: [] };
	let problems = [], elements = 0;
	try {
		await openOnce(b.context, blank); // warm the browser up once
		for (let i = 0; i < rounds; i++) {
			const f = await openOnce(b.context, blank);
			const r = await openOnce(b.context, report);
			times.blank.push(f.total_s);
			times.blankLoad.push(f.load_s);
			times.report.push(r.total_s);
			times.reportLoad.push(r.load_s);
			problems = problems.concat(r.problems);
			elements = r.elements;
			console.log(`round ${i + 1}: blank load ${f.load_s.toFixed(3)} s, drawn ${f.total_s.toFixed(3)} s; ` +
				`report load ${r.load_s.toFixed(3)} s, drawn ${r.total_s.toFixed(3)} s`);
		}
	} finally {
		await b.close();
	}
	const mb = median(times.blank), mr = median(times.report);
	console.log(`elements=${elements} problems=${problems.length}`);
	console.log(`blank_s=${mb.toFixed(3)} report_s=${mr.toFixed(3)} ` +
		`report_load_s=${median(times.reportLoad).toFixed(3)} ratio=${(mr / mb).toFixed(2)}`);
	for (const p of problems.slice(0, 5))
		console.log(`problem: ${p}`);
	return problems.length ? 1 : 0;
}

main().then((rc) => process.exit(rc), (e) => {
	console.error(`open-time: ${e && e.stack ? e.stack : e}`);
	process.exit(1);
});
