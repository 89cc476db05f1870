// #/chats, #/chat/<conversationId>, #/chat/with/<uid> — one-to-one chat as ChatViewModels.swift
// does it: `user-chats/{me}` lists one's conversations with unread counts (live), and
// `messages/{conversationId}` holds a conversation's messages (live, marked read as they arrive).
// Sending writes the message and both members' summaries in one update.
import { h, errorNote, avatar, agoTime, signInPrompt, viewStatus, emptyState, skeleton } from '/app/ui.js';
import { ServerValue } from '/lib/hearth.js';
import { Subscriptions, conversationId, otherMember, profileReader } from '/app/social.js';
import { watchConnection } from '/app/presence.js';
import { presenceLine } from '/app/connection-state.js';
import { PagedList, rememberedPages, loadOlderButton, syncChildren } from '/app/paging.js';
import { markPending } from '/app/pending.js';
import { richText } from '/app/rich-text.js';

/** How many messages are shown at first, and added by each "Load older messages". */
const PAGE_SIZE = 30;
const MAX_LENGTH = 2000;
const PREVIEW_LENGTH = 200;

export function mount(container, ctx, params) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Messages', 'chat with people'));
    return () => {};
  }
  const route = chatRoute(params);
  if (route.list) return mountList(container, ctx, me);
  const other = route.with ?? otherMember(route.conversation ?? '', me);
  if (!other || other === me) {
    const error = errorNote();
    error.show(other === me ? 'You cannot message yourself.' : 'That conversation is not yours.');
    container.replaceChildren(h('section', { class: 'page social' }, h('h1', {}, 'Messages'), error.element,
      h('p', {}, h('a', { href: '#/chats' }, 'All conversations'))));
    return () => {};
  }
  return mountConversation(container, ctx, me, other);
}

/** Which chat page the router matched: the list, a conversation, or one with a person. */
function chatRoute(params) {
  if (params?.uid) return { with: params.uid };
  if (params?.conversationId) return { conversation: params.conversationId };
  return { list: true };
}

/** The conversations, most recent first, each with the other person, a preview and unread count. */
function mountList(container, ctx, me) {
  const { hearth } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const readProfile = profileReader(hearth);
  const list = h('ul', { class: 'chat-list', 'data-testid': 'chat-list' });
  const status = viewStatus('Loading your conversations…');
  const placeholder = skeleton('rows', 3);
  // The list is redrawn on every change; this says only what is new.
  const announcer = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'chats-title' },
    h('h1', { id: 'chats-title' }, 'Messages'), error.element, status.element, announcer, placeholder, list));

  let run = 0;
  let unreadBefore = null;
  subscriptions.on(hearth.db.ref(`user-chats/${me}`).orderByChild('updated'), 'value', async (snapshot) => {
    const current = ++run;
    const conversations = [];
    snapshot.forEach((child) => {
      const summary = child.val();
      if (summary?.with) conversations.push({ id: child.key, ...summary });
    });
    conversations.reverse();
    const people = await Promise.all(conversations.map((conversation) => readProfile(conversation.with)));
    if (current !== run) return;
    placeholder.forEach((shape) => shape.remove());
    status.settle(conversations.length > 0, () => emptyState({
      title: 'No conversations yet',
      text: 'Open someone’s profile and choose Message to start one.',
      actions: [h('a', { href: '#/search', class: 'button primary', 'data-testid': 'empty-action' }, 'Find people')],
    }));
    list.replaceChildren(...conversations.map((conversation, index) => conversationRow(conversation, people[index])));
    const unread = new Map(conversations.map((conversation) => [conversation.id, Number(conversation.unread) || 0]));
    const newer = conversations.findIndex((conversation) => unreadBefore && unread.get(conversation.id) > (unreadBefore.get(conversation.id) ?? 0));
    if (newer >= 0) announcer.textContent = `New message from ${people[newer].full_name}: ${conversations[newer].lastMessage ?? ''}`;
    unreadBefore = unread;
  }, (caught) => {
    placeholder.forEach((shape) => shape.remove());
    status.clear();
    error.show(caught);
  });

  return () => subscriptions.offAll();
}

function conversationRow(conversation, person) {
  const unread = Number(conversation.unread) || 0;
  const label = `${person.full_name}${unread ? `, ${unread} unread` : ''}: ${conversation.lastMessage ?? ''}`;
  return h('li', {},
    h('a', {
      href: `#/chat/${encodeURIComponent(conversation.id)}`, class: `chat-row${unread ? ' unread' : ''}`,
      'data-testid': 'chat-row', 'data-conversation': conversation.id, 'aria-label': label,
    },
    avatar(person, 44),
    h('span', { class: 'chat-row-text' },
      h('span', { class: 'chat-row-name' }, person.full_name),
      h('span', { class: 'chat-row-preview' }, conversation.lastMessage ?? '')),
    h('span', { class: 'chat-row-meta' },
      typeof conversation.updated === 'number' ? agoTime(conversation.updated) : null,
      unread ? h('span', { class: 'unread-count', 'data-testid': 'unread-count' }, String(unread)) : null)));
}

/** One conversation with `other`: its latest messages, live; sending; marking read. */
function mountConversation(container, ctx, me, other) {
  const { hearth } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const conversation = conversationId(me, other);
  const title = h('h1', { id: 'chat-title', class: 'chat-title' }, 'Conversation');
  const presence = h('span', { class: 'chat-presence muted', 'data-testid': 'chat-presence', role: 'status' });
  const titleAvatar = h('span', { class: 'chat-title-avatar' });
  const messages = h('ol', {
    // A live region only once the history is in, so opening a chat does not read it all aloud.
    class: 'chat-messages', 'data-testid': 'chat-messages', 'aria-relevant': 'additions', 'aria-label': 'Messages',
    tabindex: '0',
  });
  const input = h('textarea', {
    id: 'chat-input', rows: '1', maxlength: String(MAX_LENGTH), 'data-testid': 'chat-input', placeholder: 'Write a message',
    'on:keydown': (event) => {
      // Enter sends; Shift+Enter makes a new line.
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    },
  });
  const older = loadOlderButton('Load older messages', () => pages.loadOlder(), 'load-older-messages');
  const status = viewStatus('Loading messages…');
  const placeholder = skeleton('bubbles', 4);
  const sendButton = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'chat-send' }, 'Send');
  const form = h('form', { class: 'chat-form', 'data-keep-clear': true, 'on:submit': (event) => { event.preventDefault(); send(); } },
    h('label', { for: 'chat-input', class: 'visually-hidden' }, 'Message'), input, sendButton);
  container.replaceChildren(h('section', { class: 'page social chat', 'aria-labelledby': 'chat-title' },
    h('header', { class: 'chat-header' },
      h('a', { href: '#/chats', class: 'chat-back', 'aria-label': 'All conversations' }, '‹'),
      h('a', { href: `#/profile/${encodeURIComponent(other)}`, class: 'chat-person' }, titleAvatar,
        h('span', { class: 'chat-person-text' }, title, presence))),
    error.element, status.element, placeholder, h('div', { class: 'list-footer' }, older), messages, form));

  // Whether they are here now (status/{uid}, kept by their app's connection; see presence.js),
  // known only while this page is connected: offline, a cached "Online" would be a guess.
  let otherStatus = null;
  let connection = 'connecting';
  const showPresence = () => {
    const line = presenceLine(otherStatus, connection);
    if (presence.textContent !== line.text) presence.textContent = line.text;
    presence.classList.toggle('online', line.online);
    presence.classList.toggle('reader-offline', connection === 'offline');
  };
  subscriptions.on(hearth.db.ref(`status/${other}`), 'value', (snapshot) => {
    otherStatus = snapshot.val();
    showPresence();
  }, () => {
    otherStatus = null;
    showPresence();
  });
  subscriptions.add(watchConnection(hearth, (state) => {
    connection = state;
    showPresence();
  }));

  let otherName = 'Them';
  profileReader(hearth)(other).then((person) => {
    otherName = person.full_name;
    title.textContent = person.full_name;
    titleAvatar.replaceChildren(avatar(person, 36));
  });

  // Back to a conversation read further up: the pages it had loaded come again, and it opens
  // where it was left. The place is kept in the screen's history entry (as main.js keeps the
  // window's), as the distance from the newest message, which a new message barely moves.
  let returningTo = history.state?.chatFromBottom ?? 0;
  let placeTimer = null;
  const fromBottom = () => Math.max(0, Math.round(messages.scrollHeight - messages.scrollTop - messages.clientHeight));
  const savePlace = () => {
    clearTimeout(placeTimer);
    if (returningTo > 0 || !messages.dataset.loaded) return;
    history.replaceState({ ...(history.state ?? {}), chatFromBottom: fromBottom() }, '');
  };
  messages.addEventListener('scroll', () => {
    clearTimeout(placeTimer);
    placeTimer = setTimeout(savePlace, 150);
  }, { passive: true });
  // Leaving by a link saves at once (a save still waiting would land on the next screen's entry).
  document.addEventListener('click', savePlace, { capture: true });
  // The person's own scrolling ends the return.
  const stopReturning = () => { returningTo = 0; };
  for (const type of ['wheel', 'touchstart', 'pointerdown', 'keydown']) messages.addEventListener(type, stopReturning, { passive: true });
  subscriptions.add(() => {
    clearTimeout(placeTimer);
    document.removeEventListener('click', savePlace, { capture: true });
  });

  // The latest messages, live, and older ones a page at a time (each ends before the oldest
  // shown). Cached messages show at once, offline too.
  const shown = new Map();
  const byKeyDescending = (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);
  const pages = new PagedList({
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = hearth.db.ref(`messages/${conversation}`).orderByKey();
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare: byKeyDescending,
    cursorOf: ([id]) => [id],
    remembered: rememberedPages('messages'),
    onChange: ({ entries, hasMore, restored }) => {
      const nearBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 80;
      const firstBefore = messages.firstElementChild;
      const heightBefore = messages.scrollHeight;
      syncChildren(messages, shown, [...entries].reverse(), (id, message) => {
        const mine = message?.from === me;
        // Written here and not on the server yet.
        return markPending(hearth, messageItem(message, mine, mine ? 'You' : otherName), `messages/${conversation}/${id}`);
      }, () => {});
      older.hidden = !hasMore;
      placeholder.forEach((shape) => shape.remove());
      status.settle(entries.length > 0,
        () => emptyState({ title: 'No messages yet', text: 'Say hello: your first message starts the conversation.' }));
      if (returningTo > 0) {
        messages.scrollTop = messages.scrollHeight - messages.clientHeight - returningTo;
        if (restored) returningTo = 0;
      } else if (nearBottom || !messages.dataset.loaded) {
        messages.scrollTop = messages.scrollHeight;
      } else if (firstBefore && messages.firstElementChild !== firstBefore) {
        // Older messages came in above: what was on screen stays in place.
        messages.scrollTop += messages.scrollHeight - heightBefore;
      }
      if (!messages.dataset.loaded) messages.setAttribute('aria-live', 'polite');
      messages.dataset.loaded = 'true';
      markRead();
    },
    onError: (caught) => {
      placeholder.forEach((shape) => shape.remove());
      status.clear();
      error.show(caught);
    },
  });
  subscriptions.add(() => pages.stop());

  /** Sets my unread count for this conversation to zero (when it is not already). */
  async function markRead() {
    const unread = hearth.db.ref(`user-chats/${me}/${conversation}/unread`);
    try {
      const count = (await unread.once('value')).val();
      if (typeof count === 'number' && count > 0) await unread.set(0);
    } catch {
      // Not being able to clear the badge should not interrupt the conversation.
    }
  }

  /**
   * The message and both members' summaries in one write; their unread count goes up by one.
   * It shows at once, marked until the server has it (offline: when the connection is back).
   */
  async function send() {
    const text = input.value.trim();
    error.clear();
    if (!text) return error.show('Write something first.');
    if (text.length > MAX_LENGTH) return error.show('The message is too long.');
    const messageId = hearth.db.ref(`messages/${conversation}`).push().key;
    const preview = text.slice(0, PREVIEW_LENGTH);
    input.value = '';
    input.focus();
    try {
      await hearth.db.ref().update({
        [`messages/${conversation}/${messageId}`]: { from: me, text, timestamp: ServerValue.TIMESTAMP },
        [`user-chats/${me}/${conversation}`]: { with: other, lastMessage: preview, updated: ServerValue.TIMESTAMP, unread: 0 },
        [`user-chats/${other}/${conversation}`]: {
          with: me, lastMessage: preview, updated: ServerValue.TIMESTAMP, unread: ServerValue.increment(1),
        },
      });
    } catch (caught) {
      error.show(caught);
      if (!input.value) input.value = text;
    }
    return undefined;
  }

  input.focus();
  return () => subscriptions.offAll();
}

/**
 * A message; one's own (`mine`) sit on the other side. `sender` is read out before it. Web
 * addresses and hashtags in it are links, as in posts (built as DOM nodes: markup stays text).
 */
function messageItem(message, mine, sender) {
  return h('li', { class: `chat-message ${mine ? 'mine' : 'theirs'}`, 'data-testid': 'chat-message' },
    h('span', { class: 'visually-hidden' }, `${sender}: `),
    h('span', { class: 'chat-text' }, richText(message?.text ?? '')),
    typeof message?.timestamp === 'number' ? agoTime(message.timestamp, { class: 'chat-time' }) : null);
}
