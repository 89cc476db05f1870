// #/saved — the signed-in user's saved posts, most recently saved first, live (as
// SavedPostsViewModel in ChatViewModels.swift): `saved/{me}/{postId}` holds the time it was saved.
// Saving and unsaving happen on the post itself (PostActions.setSaved).
import { h, errorNote, signInPrompt, viewStatus, emptyState, skeleton, showListError } from '/app/ui.js';
import { postCard } from '/app/components.js';
import { Subscriptions, childKeys, loadPosts } from '/app/social.js';

export function mount(container, ctx) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Saved posts', 'keep posts to read later'));
    return () => {};
  }
  const { hearth } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const status = viewStatus('Loading your saved posts…');
  const list = h('div', { class: 'post-list', 'data-testid': 'saved-list', 'aria-busy': 'true' }, skeleton('cards', 2));
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'saved-title' },
    h('h1', { id: 'saved-title' }, 'Saved posts'), error.element, status.element, list));

  let run = 0;
  let stopped = false;
  subscriptions.on(hearth.db.ref(`saved/${me}`).orderByValue(), 'value', async (snapshot) => {
    const current = ++run;
    try {
      const { entries } = await loadPosts(hearth, childKeys(snapshot).reverse());
      if (current !== run || stopped) return;
      list.removeAttribute('aria-busy');
      list.replaceChildren(...entries.map(([id, post]) => postCard(ctx, id, post)));
      status.settle(entries.length > 0, () => emptyState({
        title: 'Nothing saved yet',
        text: 'Open a post and choose Save to keep it here for later.',
        actions: [h('a', { href: '#/', class: 'button primary', 'data-testid': 'empty-action' }, 'Browse recent posts')],
      }));
    } catch (caught) {
      if (current === run) failed(caught);
    }
  }, failed);

  function failed(caught) {
    showListError({ status, list, error }, caught);
  }

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
