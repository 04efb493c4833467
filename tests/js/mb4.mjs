import { lower } from 'promptloom';
const PNG_HEAD = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const b = Buffer.alloc(2048); for (let i = 0; i < 2048; i++) b[i] = (i * 2654435761) >>> 24; PNG_HEAD.copy(b);
const part = { type: 'file-attachment', data: b.toString('base64'), mime: 'image/png', name: 'screenshot.png' };
const o = { provider: 'gemini' };
for (let i = 0; i < 200000; i++) lower({ parts: [part] }, o).body;
