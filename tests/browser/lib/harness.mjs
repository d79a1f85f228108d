// What the browser test needs around the page: a free port, the server process (started,
// waited for, stopped), Debian's Chromium through playwright-core, and polling with a deadline.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port that was free a moment ago (the kernel's pick for port 0). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function httpStatus(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

/**
 * Starts the server on a free port and waits until it serves the page. Retries on another port
 * when the process exits before it serves (a port taken in between). Returns {url, stop, log}.
 */
export async function startServer(binary, args, { timeoutMs = 20000 } = {}) {
  if (!fs.existsSync(binary)) throw new Error(`no server binary at ${binary} (set SIGHTLINE_SERVER)`);
  let lastLog = '';
  for (let attempt = 0; attempt < 3; ++attempt) {
    const port = await freePort();
    const child = spawn(binary, ['--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const keep = (chunk) => {
      log = (log + chunk.toString()).slice(-20000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exited = null;
    child.on('exit', (code, signal) => {
      exited = { code, signal };
    });
    const url = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + timeoutMs;
    while (exited === null && Date.now() < deadline) {
      if ((await httpStatus(url)) === 200) {
        const stop = async () => {
          if (exited !== null) return exited;
          child.kill('SIGINT');  // the server stops cleanly on Ctrl-C
          for (let i = 0; i < 50 && exited === null; ++i) await sleep(100);
          if (exited === null) child.kill('SIGKILL');
          for (let i = 0; i < 20 && exited === null; ++i) await sleep(100);
          return exited;
        };
        process.once('exit', () => {
          if (exited === null) child.kill('SIGKILL');
        });
        return { url, port, stop, log: () => log, exited: () => exited };
      }
      await sleep(100);
    }
    if (exited === null) {
      child.kill('SIGKILL');
      throw new Error(`${binary} did not serve ${url} within ${timeoutMs} ms; its output:\n${log}`);
    }
    lastLog = log;
  }
  throw new Error(`${binary} exited before it served the page, three times; its last output:\n${lastLog}`);
}

/** Debian's Chromium, headless, with a fresh profile (../shared/ECOSYSTEM.md's flags). */
export async function launchChromium(executablePath) {
  if (!fs.existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: apt-get install -y --no-install-recommends chromium`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Two pages run at once: neither may be throttled as a background tab.
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'],
  });
  const close = async () => {
    try {
      await context.close();
    } finally {
      fs.rmSync(profile, { recursive: true, force: true });
    }
  };
  return { context, close };
}
