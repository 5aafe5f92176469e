// The Node module hook of the runner and the recorder (registered only when a target is in an
// ES module): each file named in `more` (by URL) gets that text appended after its last line, so
// no line of it moves: the runner's one export more of a binding it does not export, or the
// recorder's line that wraps a binding. Node built-ins only (none imported); it runs on Node's
// hooks thread.

let more = { __proto__: null };

export async function initialize(data) {
  more = data.more;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const extra = Object.hasOwn(more, url) ? more[url] : undefined;
  if (typeof extra !== 'string' || result.format !== 'module') return result;
  const source = typeof result.source === 'string'
    ? result.source
    : new TextDecoder().decode(result.source);
  return { format: result.format, shortCircuit: true, source: source + extra };
}
