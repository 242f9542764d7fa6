// tests/browser/lib.mjs - what the browser checks share: Debian's Chromium
// launched headless through playwright-core with a fresh profile and no
// background networking, a report opened from disk with every request other
// than the file itself refused and recorded, console errors, page errors and
// dialogs recorded, and a PNG's pixels read back in the browser itself.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.MEMPROF_CHROMIUM || '/usr/bin/chromium';

// Without the background-networking flags Chromium opens connections of its
// own at start, which this machine refuses (and a test must not depend on).
const ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-default-apps',
	'--disable-extensions',
	'--metrics-recording-only',
	'--no-default-browser-check',
	'--force-color-profile=srgb',
	'--hide-scrollbars',
];

// Generous limits: the machine may be loaded; nothing waits on a clock.
export const EVENT_TIMEOUT_MS = 60000;

/*
 * Start Chromium.  Playwright gives it a fresh temporary profile
 * (--user-data-dir), removed when it closes.  Returns { browser, context,
 * newContext(opts), close() }: context is a first context with JavaScript on.
 */
export async function launch({ width = 1280, height = 900 } = {}) {
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		args: ARGS,
		timeout: EVENT_TIMEOUT_MS,
	});
	const newContext = async ({ javaScriptEnabled = true, w = width, h = height } = {}) => {
		const c = await browser.newContext({
			viewport: { width: w, height: h },
			deviceScaleFactor: 1,
			javaScriptEnabled,
		});
		c.setDefaultTimeout(EVENT_TIMEOUT_MS);
		c.setDefaultNavigationTimeout(EVENT_TIMEOUT_MS);
		return c;
	};
	let context;
	try {
		context = await newContext();
	} catch (e) {
		await browser.close().catch(() => {});
		throw e;
	}
	return {
		browser,
		context,
		newContext,
		async close() {
			await browser.close().catch(() => {});
		},
	};
}

/*
 * Open file (a path) in a new page of context, refusing every request but
 * the file itself.  Returns { page, url, log } where log collects console
 * errors, page errors, dialogs and the requests refused, from before the
 * page starts loading.
 */
export async function openReport(context, file, { waitUntil = 'load' } = {}) {
	const url = pathToFileURL(path.resolve(file)).href;
	const log = { consoleErrors: [], pageErrors: [], dialogs: [], requests: [], refused: [] };
	const page = await context.newPage();

	await page.route('**/*', (route) => {
		const u = route.request().url();
		if (u === url)
			return route.continue();
		log.refused.push(u);
		return route.abort('blockedbyclient');
	});
	page.on('request', (r) => {
		if (r.url() !== url)
			log.requests.push(r.url());
	});
	page.on('websocket', (ws) => log.requests.push(ws.url()));
	page.on('console', (m) => {
		if (m.type() === 'error')
			log.consoleErrors.push(m.text());
	});
	page.on('pageerror', (e) => log.pageErrors.push(String(e)));
	page.on('dialog', (d) => {
		log.dialogs.push(`${d.type()}: ${d.message()}`);
		d.dismiss().catch(() => {});
	});
	page.on('popup', (p) => log.dialogs.push(`popup: ${p.url()}`));
	await page.goto(url, { waitUntil });
	return { page, url, log };
}

/*
 * Read a PNG (a Buffer) in a blank page of context and measure boxes of it:
 * for each { x, y, width, height } (CSS pixels of the image) the number of
 * pixels, those not white, and the distinct colours (exact RGB).
 * No URL is loaded: the bytes go in as a Blob.
 */
export async function measurePng(context, png, boxes) {
	const page = await context.newPage();
	try {
		return await page.evaluate(
			async ({ b64, boxes }) => {
				const bin = atob(b64);
				const bytes = new Uint8Array(bin.length);
				for (let i = 0; i < bin.length; i++)
					bytes[i] = bin.charCodeAt(i);
				const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
				const canvas = new OffscreenCanvas(bmp.width, bmp.height);
				const g = canvas.getContext('2d');
				g.drawImage(bmp, 0, 0);
				const out = [];
				for (const b of boxes) {
					const x = Math.max(0, Math.floor(b.x)), y = Math.max(0, Math.floor(b.y));
					const w = Math.min(bmp.width - x, Math.ceil(b.width));
					const h = Math.min(bmp.height - y, Math.ceil(b.height));
					if (w <= 0 || h <= 0) {
						out.push({ pixels: 0, nonWhite: 0, colours: 0 });
						continue;
					}
					const d = g.getImageData(x, y, w, h).data;
					const colours = new Set();
					let nonWhite = 0;
					for (let i = 0; i < d.length; i += 4) {
						const rgb = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
						if (rgb !== 0xffffff)
							nonWhite++;
						if (colours.size < 100000)
							colours.add(rgb);
					}
					out.push({ pixels: w * h, nonWhite, colours: colours.size });
				}
				return { width: bmp.width, height: bmp.height, boxes: out };
			},
			{ b64: png.toString('base64'), boxes }
		);
	} finally {
		await page.close();
	}
}

/* A tiny TAP-like reporter: ok/not ok lines, a count, the exit status. */
export function reporter(name) {
	let n = 0, failed = 0;
	return {
		ok(cond, what, detail) {
			n++;
			if (cond) {
				console.log(`ok ${n} - ${what}`);
			} else {
				failed++;
				console.log(`not ok ${n} - ${what}`);
				if (detail !== undefined)
					for (const line of String(typeof detail === 'string' ? detail : JSON.stringify(detail, null, 1)).split('\n').slice(0, 20))
						console.log(`#   ${line}`);
			}
			return cond;
		},
		note(text) {
			console.log(`# ${text}`);
		},
		finish() {
			console.log(`# ${name}: ${n - failed} of ${n} checks passed`);
			return failed ? 1 : 0;
		},
	};
}
