// tests/browser/views.mjs - checks of the report's interactive views
// (report_views.js) for check-report.mjs: the active memory timeline is
// drawn, hovering a band shows its stack, brushing zooms and the reset
// button undoes it, a click picks a moment whose allocator state is drawn
// (its figures written out for the shell to compare with 'memprof analyze
// --at'), the timelines of two runs share one byte scale, and with hostile
// strings every band's tooltip shows its stack literally.  The page's own view objects (root.mpView) are read only to
// find where to aim; every check goes through the real mouse and #tooltip.
import fs from 'node:fs';

const squash = (s) => s.replace(/\s+/g, ' ').trim();

/* Where, in viewport coordinates, the band of a block whose stack text holds
 * want is tallest; null when no drawn band's stack holds it. */
function aimAtBand(root, want) {
	return root.evaluate((root, want) => {
		const d = root.mpView, cv = root.querySelector('canvas.bands');
		const r = cv.getBoundingClientRect(), [L, T, B] = d.PAD, H = cv.height - B - T;
		let best = null;
		d.cols.forEach((col, c) => {
			let acc = col.merged;
			for (const i of col.bands) {
				const size = d.B[i * 7 + 3], st = d.B[i * 7 + 6];
				const y0 = T + H - acc * H / d.top, y1 = T + H - (acc + size) * H / d.top;
				acc += size;
				const text = st >= 0 ? d.stacks[st].join('\n') : '';
				if (text.includes(want) && (!best || y0 - y1 > best.h))
					best = { h: y0 - y1, x: r.left + (L + c + 0.5) * r.width / cv.width,
						y: r.top + (y0 + y1) / 2 * r.height / cv.height, site: st >= 0 ? d.stacks[st][0] : '' };
			}
		});
		return best && best.h >= 2 ? best : null;
	}, want);
}

async function tipText(page) {
	return page.$eval('#tooltip', (t) => (t.hidden ? '' : t.innerText));
}

async function hoverBand(t, page, roots, want, label) {
	let p = null;
	for (const root of roots) {
		await (await root.$('canvas.bands')).scrollIntoViewIfNeeded();
		if ((p = await aimAtBand(root, want)))
			break;
	}
	if (!t.ok(p, `${label}: a band whose stack holds ${JSON.stringify(want)} is drawn`))
		return null;
	await page.mouse.move(p.x, p.y, { steps: 2 });
	const text = await tipText(page);
	t.ok(squash(text).includes(squash(want)), `${label}: hovering it shows ${JSON.stringify(want)} in #tooltip`, text);
	return text;
}

/* The timelines of a group (two runs on one axis) share one byte scale:
 * the same top, at least the highest column of each. */
async function checkOneScale(t, page, group, when) {
	const tops = await page.$$eval(`div.bands-view[data-group="${group}"]`, (rs) =>
		rs.map((r) => [r.mpView.top, Math.max(...r.mpView.cols.map((c) => c.total))]));
	t.ok(tops.length > 1 && tops.every((x) => x[0] === tops[0][0] && x[0] >= x[1]) &&
		tops.some((x) => x[1] * 1.05 === x[0]),
		`${when}, every timeline of group ${group} has one byte scale, set by the highest of them`, tops);
}

async function checkBrush(t, page, root) {
	const cv = await root.$('canvas.bands');
	await cv.scrollIntoViewIfNeeded();
	const box = await cv.boundingBox();
	const before = await root.evaluate((r) => [r.mpView.view[0], r.mpView.view[1], r.mpView.x1]);
	if (await root.getAttribute('data-group'))
		await checkOneScale(t, page, await root.getAttribute('data-group'), 'as first drawn');
	const y = box.y + box.height * 0.5;
	await page.mouse.move(box.x + box.width * 0.30, y);
	await page.mouse.down();
	await page.mouse.move(box.x + box.width * 0.60, y, { steps: 4 });
	await page.mouse.up();
	const after = await root.evaluate((r) => [r.mpView.view[0], r.mpView.view[1]]);
	const span = (after[1] - after[0]) / (before[1] - before[0]);
	t.ok(after[0] > before[0] && after[1] < before[1] && span > 0.2 && span < 0.45,
		'brushing across 30% of the timeline zooms into that range', { before, after, span });
	const group = await root.getAttribute('data-group');
	if (group)
		await checkOneScale(t, page, group, 'zoomed');
	if (group) {
		const others = await page.$$eval(`div.bands-view[data-group="${group}"]`, (rs) => rs.map((r) => r.mpView.view));
		t.ok(others.length > 1 && others.every((v) => v[0] === after[0] && v[1] === after[1]),
			`every timeline of group ${group} zoomed with it`, others);
	}
	await (await root.$('button.reset')).click();
	const reset = await root.evaluate((r) => [r.mpView.view[0], r.mpView.view[1]]);
	t.ok(reset[0] === 0 && reset[1] === before[2], 'reset zoom shows the whole axis again', reset);
}

/* Click at fraction fx of the plot; the allocator state of that moment. */
async function pickAt(t, page, root, fx) {
	const cv = await root.$('canvas.bands');
	await cv.scrollIntoViewIfNeeded();
	const box = await cv.boundingBox();
	const pad = await root.evaluate((r) => [r.mpView.PAD[0], r.querySelector('canvas.bands').width]);
	const x = box.x + (pad[0] + (pad[1] - pad[0]) * fx) * box.width / pad[1];
	await page.mouse.click(x, box.y + box.height * 0.5);
	const fig = await figures(root);
	t.ok(fig.moment !== null && fig.free !== null, 'a click on the timeline draws the allocator state there', fig);
	return fig;
}

function figures(root) {
	return root.$eval('.state-figures', (p) => {
		const o = { text: p.innerText };
		for (const k of ['moment', 'reserved', 'live', 'pending', 'free', 'hole'])
			o[k] = p.getAttribute(`data-${k}`);
		return o;
	});
}

/* The allocator state at each moment the page names (peak, OOMs, end). */
async function markFigures(root) {
	const sel = await root.$('select.moment');
	const out = [];
	for (const o of await sel.$$eval('option', (os) => os.map((x) => [x.value, x.textContent]))) {
		await sel.selectOption(o[0]);
		out.push({ label: o[1], ...(await figures(root)) });
	}
	return out;
}

async function checkState(t, page, root) {
	const cs = await root.$('canvas.state');
	await cs.scrollIntoViewIfNeeded();
	const box = await cs.boundingBox();
	let shown = '';
	for (let fx = 0.01; fx < 1 && !/^live: /m.test(shown); fx += 0.04) {
		await page.mouse.move(box.x + box.width * fx, box.y + 6);
		shown = await tipText(page);
	}
	t.ok(/live: /.test(shown) && /requested/.test(shown), 'hovering a block of the allocator state shows it', shown);
}

/* o: { bandTips, brush, pickOut, hostile } */
export async function checkViews(t, page, o) {
	const roots = await page.$$('div.bands-view');
	if (!t.ok(roots.length > 0, 'the page has an active memory timeline'))
		return;
	for (const root of roots) {
		const dev = await root.getAttribute('data-device');
		const visible = await root.evaluate((r) => !r.hidden && r.mpView && r.mpView.cols.length > 0);
		t.ok(visible, `device ${dev}: the timeline is shown and laid out`);
		if (!visible)
			continue;
		if (o.axis) {
			const axis = await root.evaluate((r) => [r.getAttribute('data-axis'),
				r.querySelector('.bands-merged').textContent]);
			t.ok(axis[0] === o.axis && (o.axis !== 'events' || /Showing event \d+ to event \d+/.test(axis[1])),
				`device ${dev}: the timeline's axis is ${o.axis}`, axis);
		}
		if (o.hostile) {
			const stacks = await root.evaluate((r) => r.mpView.stacks);
			const texts = [];
			for (const s of stacks) {
				const text = await hoverBand(t, page, [root], s[0], `device ${dev}, stack '${s[0].slice(0, 40)}'`);
				if (text !== null)
					texts.push(text);
			}
			const all = squash(texts.join('\n'));
			for (const h of o.hostile)
				if (stacks.some((s) => s.join('\n').includes(h)))
					t.ok(all.includes(squash(h)), `device ${dev}: ${JSON.stringify(h)} shows literally in a band's tooltip`);
		}
	}
	for (const want of o.bandTips)
		await hoverBand(t, page, roots, want, 'the timeline');
	const root = roots[0];
	if (o.brush)
		await checkBrush(t, page, root);
	if (o.pickOut) {
		const marks = await markFigures(root);
		const picked = await pickAt(t, page, root, o.pickAt);
		await checkState(t, page, root);
		fs.writeFileSync(o.pickOut, JSON.stringify({ picked, marks }, null, 1) + '\n');
	}
}

/* The icicle's toggle: closed, the frame is in no drawn cell; opened, the
 * icicle with every frame is drawn and hovering the frame's cell names it. */
export async function checkAllFrames(t, page, frame) {
	const drawnWith = () => page.$$eval('svg.chart[data-chart^=peak] .cell', (cs, f) => cs.filter((c) =>
		c.checkVisibility() && c.getBoundingClientRect().width > 0 && (c.getAttribute('data-tip') || '').split('\n')[0].includes(f)).length, frame);
	t.ok(await drawnWith() === 0, `'${frame}' is in no icicle cell while the toggle is closed`);
	const summary = await page.$('details.all-frames > summary');
	if (!t.ok(summary, 'the icicle has a toggle for interpreter and runtime frames'))
		return;
	await summary.click();
	t.ok(await drawnWith() > 0, `opening it draws '${frame}' in an icicle cell`);
	const cell = await page.$(`svg.chart[data-chart=peak-all] .cell[data-tip^="${frame}"]`);
	if (!cell)
		return;
	await cell.scrollIntoViewIfNeeded();
	const box = await cell.boundingBox();
	await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
	const text = await tipText(page);
	t.ok(text.includes(frame), `hovering that cell shows '${frame}' in #tooltip`, text);
	await summary.click();
}
