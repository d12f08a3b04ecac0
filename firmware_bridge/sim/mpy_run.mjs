// Run a Python script under the official MicroPython WebAssembly port (npm:
// @micropython/micropython-webassembly-pyscript), with a folder tree copied into its
// filesystem.  Usage: node mpy_run.mjs <micropython.mjs> <heap bytes> <script.py> [dest=src ...]
// Everything the script prints goes to stdout; an uncaught exception exits with status 1.
import fs from "fs";
import path from "path";

const [modPath, heap, script, ...trees] = process.argv.slice(2);
const { loadMicroPython } = await import(modPath);
let out = "";
const mp = await loadMicroPython({
  heapsize: parseInt(heap, 10),
  pystack: 16384,
  linebuffer: false,
  stdout: (s) => { process.stdout.write(s); },
  stderr: (s) => { process.stderr.write(s); },
});

function mkdirs(dir) {
  let cur = "";
  for (const part of dir.split("/").filter(Boolean)) {
    cur += "/" + part;
    try { mp.FS.mkdir(cur); } catch (e) { /* exists */ }
  }
}
for (const spec of trees) {
  const [dest, src] = spec.split("=");
  mkdirs(path.dirname(dest));
  mp.FS.writeFile(dest, fs.readFileSync(src));
}
try {
  mp.runPython(fs.readFileSync(script, "utf8"));
} catch (e) {
  process.stderr.write(String(e && e.message ? e.message : e) + "\n");
  process.exit(1);
}
