// A resolve hook for Node's module loader: the web app's modules import each other by their
// paths on the site (`/app/…`, `/lib/…`), as the browser loads them; here those are the files
// under Sources/HearthWeb/Resources. Registered by tests that import the app's own modules:
//   register('./site-paths.mjs', import.meta.url)
const SITE_ROOT = new URL('../../Sources/HearthWeb/Resources/', import.meta.url);

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('/app/') || specifier.startsWith('/lib/')) {
    return next(new URL(`.${specifier}`, SITE_ROOT).href, context);
  }
  return next(specifier, context);
}
