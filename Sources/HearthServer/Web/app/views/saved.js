// #/saved — the signed-in user's saved posts, most recently saved first, live (as
// SavedPostsViewModel in ChatViewModels.swift): `saved/{me}/{postId}` holds the time it was saved.
// Saving and unsaving happen on the post itself (PostActions.setSaved).
import { h, errorNote, signInPrompt } from '/app/ui.js';
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
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading…');
  const list = h('div', { class: 'post-list', 'data-testid': 'saved-list' });
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'saved-title' },
    h('h1', { id: 'saved-title' }, 'Saved posts'), error.element, status, list));

  let run = 0;
  let stopped = false;
  subscriptions.on(hearth.db.ref(`saved/${me}`).orderByValue(), 'value', async (snapshot) => {
    const current = ++run;
    try {
      const { entries } = await loadPosts(hearth, childKeys(snapshot).reverse());
      if (current !== run || stopped) return;
      list.replaceChildren(...entries.map(([id, post]) => postCard(ctx, id, post)));
      status.textContent = entries.length ? '' : 'Nothing saved yet. Use Save on a post to keep it here.';
      status.hidden = entries.length > 0;
    } catch (caught) {
      if (current === run) error.show(caught);
    }
  }, (caught) => error.show(caught));

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
