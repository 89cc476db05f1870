// #/search?q= — search as SearchViewModel.swift does: `#tag` finds posts with that hashtag
// (`hashtags/{tag}`); other text finds people whose first or last name starts with it (through
// `people/*/_search_index`, hiding people who blocked the searcher) and recent posts containing it.
import { h, errorNote, avatar } from '/app/ui.js';
import { postCard } from '/app/components.js';
import { childKeys, loadPosts, personOf } from '/app/social.js';

/** Shorter queries search nothing. */
const MINIMUM_LENGTH = 2;
/** How many recent posts a text search looks through. */
const RECENT_POSTS_SEARCHED = 200;
const PEOPLE_PER_INDEX = 10;
const TYPING_PAUSE_MS = 250;

export function mount(container, ctx, params) {
  const { hearth } = ctx;
  const error = errorNote();
  const input = h('input', {
    type: 'search', id: 'search-input', name: 'q', autocomplete: 'off', 'data-testid': 'search-input',
    placeholder: 'A name, words or #hashtag', value: params?.q ?? '',
  });
  const status = h('p', { class: 'muted', role: 'status' });
  const people = h('section', { class: 'search-people', 'aria-labelledby': 'search-people-title', hidden: true },
    h('h2', { id: 'search-people-title' }, 'People'),
    h('ul', { class: 'people-list', 'data-testid': 'search-people' }));
  const posts = h('section', { class: 'search-posts', 'aria-labelledby': 'search-posts-title', hidden: true },
    h('h2', { id: 'search-posts-title' }, 'Posts'),
    h('div', { class: 'post-list', 'data-testid': 'search-posts' }));

  const form = h('form', { class: 'search-form', role: 'search', 'on:submit': (event) => { event.preventDefault(); run(); } },
    h('label', { for: 'search-input' }, 'Search people and posts'),
    h('div', { class: 'search-row' }, input, h('button', { type: 'submit', class: 'button primary' }, 'Search')));
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'search-title' },
    h('h1', { id: 'search-title' }, 'Search'),
    form, error.element, status, people, posts));

  let pause = null;
  let searchRun = 0;
  let stopped = false;
  input.addEventListener('input', () => {
    clearTimeout(pause);
    pause = setTimeout(run, TYPING_PAUSE_MS);
  });
  input.focus();
  if (input.value) run();

  async function run() {
    clearTimeout(pause);
    const query = input.value.trim().toLowerCase();
    // Keep the address in step without a new page (replaceState fires no hashchange).
    history.replaceState(null, '', query ? `#/search?q=${encodeURIComponent(input.value.trim())}` : '#/search');
    const current = ++searchRun;
    error.clear();
    if (query.length < MINIMUM_LENGTH) {
      showResults(null, null);
      status.textContent = query ? `Type at least ${MINIMUM_LENGTH} characters.` : '';
      return;
    }
    status.textContent = 'Searching…';
    try {
      const [foundPeople, foundPosts] = query.startsWith('#')
        ? [null, await postsTagged(query.slice(1))]
        : await Promise.all([peopleNamed(query), postsContaining(query)]);
      if (current !== searchRun || stopped) return;
      showResults(foundPeople, foundPosts);
      const total = (foundPeople?.length ?? 0) + foundPosts.length;
      status.textContent = total ? '' : query.startsWith('#')
        ? `No posts tagged ${query} yet.`
        : 'Nobody and nothing found. Try the start of a first or last name, or a #hashtag.';
    } catch (caught) {
      if (current !== searchRun || stopped) return;
      status.textContent = '';
      error.show(caught);
    }
  }

  /** People whose name or reversed name starts with `prefix`, less those who blocked me. */
  async function peopleNamed(prefix) {
    const found = new Map();
    const reads = ['_search_index/full_name', '_search_index/reversed_full_name'].map((index) =>
      hearth.db.ref('people').orderByChild(index).startAt(prefix).endAt(`${prefix}\uf8ff`).limitToFirst(PEOPLE_PER_INDEX).once('value'));
    for (const matches of await Promise.all(reads)) {
      matches.forEach((child) => {
        const profile = child.val();
        if (profile?.full_name) found.set(child.key, personOf(child.key, profile));
      });
    }
    const me = ctx.user?.uid;
    if (me) {
      for (const blocker of childKeys(await hearth.db.ref(`blocked/${me}`).once('value'))) found.delete(blocker);
    }
    return [...found.values()].sort((a, b) => a.full_name.localeCompare(b.full_name, undefined, { sensitivity: 'base' }));
  }

  async function postsContaining(words) {
    const recent = await hearth.db.ref('posts').orderByKey().limitToLast(RECENT_POSTS_SEARCHED).once('value');
    const entries = [];
    recent.forEach((child) => {
      const post = child.val();
      const text = `${post?.title ?? ''}\n${post?.body ?? ''}`.toLowerCase();
      if (post?.author && text.includes(words)) entries.push([child.key, post]);
    });
    return entries.reverse();
  }

  async function postsTagged(tag) {
    if (!/^[\p{L}\p{N}_]+$/u.test(tag)) return [];
    const ids = childKeys(await hearth.db.ref(`hashtags/${tag}`).once('value')).sort().reverse();
    return (await loadPosts(hearth, ids)).entries;
  }

  function showResults(foundPeople, foundPosts) {
    people.hidden = !foundPeople?.length;
    people.querySelector('ul').replaceChildren(...(foundPeople ?? []).map((person) =>
      h('li', {},
        h('a', { href: `#/profile/${encodeURIComponent(person.uid)}`, class: 'person-row', 'data-testid': 'person-result' },
          avatar(person, 40), h('span', { class: 'person-name' }, person.full_name)))));
    posts.hidden = !foundPosts?.length;
    posts.querySelector('div').replaceChildren(...(foundPosts ?? []).map(([id, post]) => postCard(ctx, id, post)));
  }

  return () => {
    stopped = true;
    clearTimeout(pause);
  };
}
