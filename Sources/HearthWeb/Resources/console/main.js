// The console's shell: sign-in, the header with the database picker, the section navigation
// (hash routes #/data, #/rules, #/users, #/files, #/server, #/logs, #/backups, #/functions, #/hosting) and mounting the sections.
// A section module exports `mount(container, ctx, route)` and returns its cleanup.

import { Hearth } from '/lib/hearth.js';
import { AdminApi } from './api.js';
import { h, skipLinkFocusesMain, toast } from './dom.js';
import * as backups from './sections/backups.js';
import { backupWarning } from './backup-warning.js';
import * as data from './sections/data.js';
import * as files from './sections/files.js';
import * as functions from './sections/functions.js';
import * as hosting from './sections/hosting.js';
import * as logs from './sections/logs.js';
import * as rules from './sections/rules.js';
import * as server from './sections/server.js';
import * as users from './sections/users.js';
import { askForToken, checkToken, forgetToken, storedToken } from './signin.js';

const SECTIONS = [
  { name: 'data', title: 'Data', module: data },
  { name: 'rules', title: 'Rules', module: rules },
  { name: 'users', title: 'Users', module: users },
  { name: 'files', title: 'Files', module: files },
  { name: 'server', title: 'Server', module: server },
  { name: 'logs', title: 'Logs', module: logs },
  { name: 'backups', title: 'Backups', module: backups },
  { name: 'functions', title: 'Functions', module: functions },
  { name: 'hosting', title: 'Hosting', module: hosting },
];

const DATABASE_KEY = 'hearth.console.database';

const root = document.getElementById('app');

async function start() {
  skipLinkFocusesMain();
  let token = storedToken();
  let reason = '';
  if (token) {
    try {
      await checkToken(token);
    } catch (error) {
      reason = error.message;
      token = null;
      forgetToken();
    }
  }
  token ??= await askForToken(root, reason);
  let hearth;
  try {
    hearth = await Hearth.connect({ adminToken: token, storageKey: 'hearth.console.session' });
  } catch (error) {
    root.replaceChildren(h('main', { id: 'main', class: 'signin-page', tabindex: -1 },
      h('p', { class: 'error', role: 'alert' }, `The server's settings could not be read: ${error.message}`)));
    return;
  }
  const api = new AdminApi({ origin: location.origin, token, bucket: hearth.bucket,
    database: sessionStorage.getItem(DATABASE_KEY) });
  new Shell({ hearth, api }).start();
}

class Shell {
  constructor(ctx) {
    this.ctx = ctx;
    this.cleanup = null;
    this.routeKey = null;
    this.main = h('main', { id: 'main', class: 'content', tabindex: -1 });
    this.links = SECTIONS.map((section) => h('a', { href: `#/${section.name}`, class: 'tab',
      'data-testid': `nav-${section.name}` }, section.title));
    /** Says on every screen when backups are off or failing (./backup-warning.js). */
    this.backupBanner = h('div', { class: 'banner', role: 'status', 'data-testid': 'backup-warning', hidden: true });
    this.databases = h('select', { id: 'database', 'data-testid': 'database-picker',
      'on:change': () => this.chooseDatabase(this.databases.value) });
  }

  start() {
    root.replaceChildren(
      h('header', { class: 'topbar' },
        h('a', { class: 'brand', href: '#/data' }, 'Hearth ', h('span', { class: 'muted' }, 'console')),
        h('div', { class: 'database-picker' }, h('label', { for: 'database' }, 'Database'), this.databases),
        h('button', { type: 'button', class: 'button quiet', 'data-testid': 'sign-out', 'on:click': () => {
          forgetToken();
          location.reload();
        } }, 'Sign out')),
      h('nav', { class: 'tabs', 'aria-label': 'Sections' }, this.links),
      this.backupBanner,
      this.main);
    window.addEventListener('hashchange', () => {
      this.route(true);
      this.checkBackups();
    });
    this.route(false);
    this.loadDatabases();
    this.checkBackups();
  }

  /** Asks the server how backups stand (a cheap request) and shows a warning when it must. */
  async checkBackups() {
    let status = null;
    try {
      status = await this.ctx.api.backupProgress();
    } catch {
      return; // the sections say when the server cannot be reached
    }
    const warning = backupWarning(status, Date.now());
    this.backupBanner.hidden = !warning;
    this.backupBanner.className = `banner ${warning?.level ?? ''}`;
    this.backupBanner.replaceChildren(...(warning
      ? [h('span', {}, warning.text), ' ', h('a', { href: '#/backups' }, 'Backups')]
      : []));
  }

  /** Fills the picker from the server's figures; the chosen database stays even if it holds no data yet. */
  async loadDatabases() {
    let names = [];
    try {
      names = (await this.ctx.hearth.admin.stats()).databases.map((database) => database.name);
    } catch (error) {
      toast(`The list of databases could not be read: ${error.message}`, 'error');
    }
    const current = this.ctx.api.database ?? (names.includes('default') ? 'default' : names[0] ?? 'default');
    if (!names.includes(current)) names.push(current);
    this.databases.replaceChildren(...names.sort().map((name) => h('option', { value: name }, name)));
    this.databases.value = current;
  }

  chooseDatabase(name) {
    this.ctx.api.database = name;
    sessionStorage.setItem(DATABASE_KEY, name);
    toast(`Showing database ${name}.`);
    this.route(false, true);
  }

  route(focus, force = false) {
    const parts = location.hash.replace(/^#\/?/, '').split('/');
    const section = SECTIONS.find((candidate) => candidate.name === parts[0]);
    if (!section) {
      location.replace('#/data');
      return;
    }
    if (!force && location.hash === this.routeKey) return;
    this.routeKey = location.hash;
    this.cleanup?.();
    for (const link of this.links) {
      if (link.getAttribute('href') === `#/${section.name}`) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${section.title} · Hearth console`;
    this.main.replaceChildren();
    this.cleanup = section.module.mount(this.main, this.ctx, { name: section.name, rest: parts.slice(1).filter(Boolean) });
    // Moving focus to the new heading tells screen-reader users the page changed.
    if (focus) this.main.querySelector('h1')?.focus();
  }
}

start();
