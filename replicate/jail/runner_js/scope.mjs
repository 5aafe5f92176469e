// The Node runner's module hook (registered by main.cjs only when its target is a binding of
// an ES module's own scope rather than an export): the target file's source gets one export
// more, appended after its last line, of that binding under a name no module spells. Node
// built-ins only (none imported); it runs on Node's hooks thread.

let wanted;

export async function initialize(data) {
  wanted = data;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (wanted === undefined || url !== wanted.href || result.format !== 'module') return result;
  const source = typeof result.source === 'string'
    ? result.source
    : new TextDecoder().decode(result.source);
  const more = `\n;export { ${wanted.name} as "${wanted.exportName}" };\n`;
  return { format: result.format, shortCircuit: true, source: source + more };
}
