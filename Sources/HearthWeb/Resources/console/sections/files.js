// The Files section: the storage bucket folder by folder (`#/files/<folder>`), with image
// previews, size, type and date, download, delete, and upload into the current folder.

import { encodePath } from '../api.js';
import { breadcrumbs, busy, confirmDialog, errorWords, formatBytes, h, progressBar, saveBlob, toast } from '../dom.js';

const PAGE_SIZE = 100;
// Bigger images get no preview: the bucket has no server-side thumbnails.
const PREVIEW_MAX_BYTES = 8 << 20;
// Only raster images are previewed: an SVG (or anything else) turned into a blob: URL would
// belong to the console's origin, and is a document a browser could be asked to open.
const PREVIEW_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/x-icon']);
const METADATA_CONCURRENCY = 4;

function filesHash(folder) {
  return folder ? `#/files/${encodePath(folder)}` : '#/files';
}

export function mount(container, { hearth, api }, route) {
  const folder = route.rest.map(decodeURIComponent).join('/');
  const previewURLs = [];
  const queue = taskQueue(METADATA_CONCURRENCY);
  let alive = true;
  let pageToken = null;

  const body = h('tbody', {});
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'files-error', hidden: true });
  const more = h('button', { type: 'button', class: 'button', hidden: true, 'data-testid': 'files-more',
    'on:click': () => loadPage() }, 'Show more files');
  const progress = progressBar('Upload progress');
  const upload = h('input', { type: 'file', multiple: true, class: 'visually-hidden',
    'data-testid': 'files-upload', 'on:change': () => uploadFiles() });
  // Previews load when their row scrolls into view.
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      entry.target.loadPreview();
    }
  });

  container.append(
    h('div', { class: 'section-head' },
      h('h1', { id: 'section-title', tabindex: -1 }, 'Files'),
      h('span', { class: 'muted' }, 'Bucket ', h('code', {}, hearth.bucket))),
    h('div', { class: 'data-toolbar' },
      breadcrumbs(folder ? folder.split('/') : [], (parts) => filesHash(parts.join('/')), 'bucket', 'Folder'),
      h('div', { class: 'button-row' },
        h('label', { class: 'button primary file-button' }, 'Upload files here…', upload))),
    progress.element,
    error,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'files-table', 'data-testid': 'files-table' },
        h('caption', { class: 'visually-hidden' }, `Files in ${folder || 'the bucket root'}`),
        h('thead', {}, h('tr', {}, ['Preview', 'Name', 'Type', 'Size', 'Updated', 'Actions']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    more);

  async function loadPage() {
    error.hidden = true;
    try {
      const listing = await hearth.storage.ref(folder).list({ delimiter: '/', maxResults: PAGE_SIZE, pageToken });
      if (!alive) return;
      if (!pageToken && !listing.prefixes.length && !listing.items.length) {
        body.replaceChildren(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'This folder is empty.')));
      }
      body.append(...listing.prefixes.map(folderRow), ...listing.items.map(fileRow));
      pageToken = listing.nextPageToken;
      more.hidden = !pageToken;
    } catch (failure) {
      error.textContent = `The folder could not be listed: ${errorWords(failure)}`;
      error.hidden = false;
    }
  }

  function folderRow(ref) {
    return h('tr', { 'data-testid': 'folder-row', 'data-name': ref.fullPath },
      h('td', { colspan: 6 }, h('a', { class: 'folder-link', href: filesHash(ref.fullPath) }, folderIcon(), `${ref.name}/`)));
  }

  function fileRow(ref) {
    const preview = h('td', { 'data-label': 'Preview', class: 'preview' });
    const type = h('td', { 'data-label': 'Type' });
    const size = h('td', { 'data-label': 'Size' });
    const updated = h('td', { 'data-label': 'Updated' });
    const row = h('tr', { 'data-testid': 'file-row', 'data-name': ref.fullPath },
      preview,
      h('td', { 'data-label': 'Name', class: 'file-name' }, ref.name),
      type, size, updated,
      h('td', { 'data-label': 'Actions' }, h('div', { class: 'button-row' },
        h('button', { type: 'button', class: 'button', 'aria-label': `Download ${ref.name}`, 'data-testid': 'file-download',
          'on:click': (event) => busy(event.currentTarget, () => download(ref)) }, 'Download'),
        h('button', { type: 'button', class: 'button danger', 'aria-label': `Delete ${ref.name}`, 'data-testid': 'file-delete',
          'on:click': () => remove(ref, row) }, 'Delete'))));
    queue(async () => {
      if (!alive) return;
      try {
        const metadata = await ref.getMetadata();
        type.textContent = metadata.contentType ?? '';
        size.textContent = formatBytes(Number(metadata.size));
        updated.append(h('time', { datetime: metadata.updated }, new Date(metadata.updated).toLocaleString()));
        const mediaType = (metadata.contentType ?? '').split(';')[0].trim().toLowerCase();
        if (PREVIEW_TYPES.has(mediaType) && Number(metadata.size) <= PREVIEW_MAX_BYTES) {
          preview.loadPreview = () => showPreview(ref, preview);
          observer.observe(preview);
        }
      } catch (failure) {
        type.textContent = errorWords(failure);
      }
    });
    return row;
  }

  // An <img> cannot send the admin token, so the image is fetched with it and shown from a blob: URL.
  async function showPreview(ref, cell) {
    try {
      const blob = await api.download(api.storageUrl(ref.fullPath, { alt: 'media' }));
      if (!alive) return;
      const url = URL.createObjectURL(blob);
      previewURLs.push(url);
      cell.append(h('img', { src: url, alt: `Preview of ${ref.name}`, class: 'thumbnail', 'data-testid': 'file-preview' }));
    } catch (failure) {
      cell.append(h('span', { class: 'muted' }, 'no preview'));
    }
  }

  async function download(ref) {
    // Saved as plain bytes: the blob: URL is never a document of the console's origin.
    const blob = await api.download(api.storageUrl(ref.fullPath, { alt: 'media' }), {
      type: 'application/octet-stream',
      onProgress: (received, total) => progress.update(total ? received / total : null,
        `Downloading ${ref.name}: ${formatBytes(received)}${total ? ` of ${formatBytes(total)}` : ''}`),
    });
    progress.update(1, `Downloaded ${ref.name}.`);
    saveBlob(blob, ref.name);
  }

  async function remove(ref, row) {
    if (!(await confirmDialog(`Delete the file ${ref.fullPath}?`, { confirm: 'Delete', danger: true }))) return;
    try {
      await ref.delete();
      row.remove();
      toast(`Deleted ${ref.fullPath}.`, 'success');
    } catch (failure) {
      toast(errorWords(failure), 'error');
    }
  }

  async function uploadFiles() {
    const chosen = [...upload.files];
    upload.value = '';
    for (const [index, file] of chosen.entries()) {
      const ref = hearth.storage.ref(folder ? `${folder}/${file.name}` : file.name);
      const label = chosen.length > 1 ? `${file.name} (${index + 1} of ${chosen.length})` : file.name;
      try {
        await ref.put(file, { contentType: file.type || 'application/octet-stream' }, (fraction) =>
          progress.update(fraction, `Uploading ${label}: ${Math.round(fraction * 100)}% of ${formatBytes(file.size)}`));
        progress.update(1, `Uploaded ${label}.`);
      } catch (failure) {
        progress.hide();
        toast(`${file.name} was not uploaded: ${errorWords(failure)}`, 'error');
      }
    }
    if (!alive) return;
    body.replaceChildren();
    pageToken = null;
    await loadPage();
  }

  loadPage();
  return () => {
    alive = false;
    observer.disconnect();
    for (const url of previewURLs) URL.revokeObjectURL(url);
  };
}

function folderIcon() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'folder-icon');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', 'M3 5.5A1.5 1.5 0 0 1 4.5 4h5l2 2.5h8A1.5 1.5 0 0 1 21 8v10.5a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z');
  svg.append(path);
  return svg;
}

/** Runs queued async tasks, at most `limit` at a time (the browser allows six connections per server). */
function taskQueue(limit) {
  const waiting = [];
  let running = 0;
  const pump = () => {
    while (running < limit && waiting.length) {
      running += 1;
      waiting.shift()().finally(() => {
        running -= 1;
        pump();
      });
    }
  };
  return (task) => {
    waiting.push(task);
    pump();
  };
}
