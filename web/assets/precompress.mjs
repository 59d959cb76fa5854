// Writes FILE.gz and FILE.br next to each FILE given: the vendored browser
// files compressed once at build time, at the strongest settings (gzip 9,
// brotli 11), so the server sends them without compressing per request
// (web/static.go serves .br to a browser that accepts br, else .gz).
// Brotli 11 takes about a second on the ECharts bundle: too slow for a
// server's start, nothing for `make assets`.
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

for (const file of process.argv.slice(2)) {
  const body = readFileSync(file);
  writeFileSync(file + '.gz', gzipSync(body, { level: 9 }));
  writeFileSync(file + '.br', brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  }));
}
