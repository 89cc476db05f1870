// #/settings/notifications — push notifications, as NotificationSettingsViewModel: turning them
// on or off in this browser (app/push.js), and which kinds the person wants pushed at all
// (`notificationSettings/{me}/{kind}`: false for off, no entry for on; live, so another device's
// change shows here). The list in #/notifications shows every kind whatever is chosen here.
import { h, errorNote, signInPrompt, busy, toast } from '/app/ui.js';
import { Subscriptions } from '/app/social.js';
import { PUSH_KINDS } from '/app/push.js';

export function mount(container, ctx) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Notification settings', 'choose your notifications'));
    return () => {};
  }
  const { hearth, push } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  let stopped = false;

  // This browser.
  const deviceState = h('p', { 'data-testid': 'push-state', role: 'status' }, 'Checking this browser…');
  const toggle = h('button', { type: 'button', class: 'button primary', 'data-testid': 'push-toggle', hidden: true });
  async function showDevice() {
    const permission = push?.permission ?? 'unsupported';
    const on = await push?.isOn(me).catch(() => false);
    if (stopped) return;
    toggle.hidden = permission === 'unsupported' || (permission === 'denied' && !on);
    toggle.dataset.on = String(Boolean(on));
    toggle.textContent = on ? 'Turn off on this device' : 'Turn on for this device';
    deviceState.dataset.state = on ? 'on' : permission;
    deviceState.textContent = on
      ? 'This browser shows your notifications, also when Hearth is closed.'
      : permission === 'unsupported'
        ? 'This browser cannot show push notifications.'
        : permission === 'denied'
          ? 'Notifications are blocked for this site: allow them in your browser’s site settings to get them here.'
          : 'This browser does not show your notifications when Hearth is closed.';
  }
  toggle.addEventListener('click', () => busy(toggle, async () => {
    error.clear();
    if (toggle.dataset.on === 'true') {
      await push.disable(me);
      toast('Push notifications are off on this device.');
    } else {
      await push.enable(me);
      toast('Push notifications are on for this device.', 'success');
    }
    await showDevice();
  }, (failure) => {
    error.show(failure);
    showDevice();
  }));

  // The kinds.
  const boxes = new Map();
  const kinds = h('fieldset', { class: 'stack', 'data-testid': 'push-kinds', disabled: true },
    h('legend', { class: 'label' }, 'Send me push notifications about'),
    ...PUSH_KINDS.map(({ kind, label }) => {
      const box = h('input', { type: 'checkbox', id: `push-kind-${kind}`, 'data-testid': `push-kind-${kind}`, checked: true });
      boxes.set(kind, box);
      box.addEventListener('change', () => {
        error.clear();
        const entry = hearth.db.ref(`notificationSettings/${me}/${kind}`);
        (box.checked ? entry.remove() : entry.set(false)).catch((failure) => {
          error.show(failure);
        });
      });
      return h('label', { class: 'row', for: `push-kind-${kind}` }, box, label);
    }));
  subscriptions.on(hearth.db.ref(`notificationSettings/${me}`), 'value', (snapshot) => {
    const chosen = snapshot.val() ?? {};
    for (const [kind, box] of boxes) box.checked = chosen[kind] !== false;
    kinds.disabled = false;
  }, (failure) => error.show(failure));

  container.replaceChildren(h('section', { class: 'page form-page', 'aria-labelledby': 'notification-settings-title' },
    h('div', { class: 'form-card stack' },
      h('h1', { id: 'notification-settings-title' }, 'Notification settings'),
      error.element,
      h('h2', {}, 'This device'), deviceState, h('div', { class: 'row' }, toggle),
      h('hr', { class: 'separator' }),
      kinds,
      h('p', { class: 'muted small' }, 'Everything still shows in ', h('a', { href: '#/notifications' }, 'Notifications'), '.'))));
  showDevice();

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
