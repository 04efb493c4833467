import { performance } from 'node:perf_hooks';
import { lower } from 'promptloom';
function t(name, f, n = 5000) { for (let i = 0; i < 500; i++) f(); const s = performance.now(); for (let i = 0; i < n; i++) f(); console.log(name, ((performance.now() - s) * 1000 / n).toFixed(2), 'us'); }
const source = Array.from({ length: 400 }, (_, i) => `  const v${i} = compute(${i}, "value ${i}") // line ${i + 1}`).join('\n');
const PNG_HEAD = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const b = Buffer.alloc(2048); for (let i = 0; i < 2048; i++) b[i] = (i * 2654435761) >>> 24; PNG_HEAD.copy(b);
const smallPng = b.toString('base64');
const smallPdf = Buffer.from('%PDF-1.4\n' + 'x'.repeat(2000) + '\n%%EOF\n').toString('base64');
const parts = [
        { type: 'text', text: 'Review this change.' },
        { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/compute.ts', range: { start: 100, end: 140 } } },
        { type: 'editor-context', kind: 'open', payload: ['src/lib/compute.ts', 'src/lib/bar.ts'], emitted_at: 5 },
        { type: 'file-attachment', data: smallPng, mime: 'image/png', name: 'screenshot.png' },
        { type: 'mention', target: { kind: 'skill', name: 'reviewer' } },
        { type: 'editor-context', kind: 'cursor', payload: { line: 120, column: 4 }, emitted_at: 6 },
        { type: 'file-attachment', data: smallPdf, mime: 'application/pdf', name: 'spec.pdf' },
        { type: 'editor-context', kind: 'selection', source: 'editor-1', payload: { text: 'compute(1)' }, emitted_at: 6 },
        { type: 'file-attachment', data: Buffer.from('A=1\nB=2\n').toString('base64'), mime: 'text/plain', name: 'env.txt' },
        { type: 'text', text: 'Focus on error handling.' },
      ];
const o = { provider: 'gemini', resolve: () => source };
t('mixed', () => lower({ parts }, o).body);
t('mixed no media', () => lower({ parts: parts.filter((p, i) => i !== 3 && i !== 6) }, o).body);
t('mixed no media no ref', () => lower({ parts: parts.filter((p, i) => i !== 3 && i !== 6 && i !== 1) }, o).body);
t('one image', () => lower({ parts: [parts[3]] }, o).body);
t('one ref', () => lower({ parts: [parts[1]] }, o).body);
t('one ctx', () => lower({ parts: [parts[2]] }, o).body);
t('one text att', () => lower({ parts: [parts[8]] }, o).body);
