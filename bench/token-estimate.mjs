// How far the context fit's token estimate (src/conversation/lower/fit.rs) is from real
// tokenizers: OpenAI's o200k_base (gpt-tokenizer) and Anthropic's published tokenizer
// (@anthropic-ai/tokenizer, the Claude 2 vocabulary: newer Claude models count somewhat
// more). The corpus is this repository's own text, cut into pieces of about 3 KB: English
// prose (README.md, docs/, ARCHITECTURE.md), Rust and JavaScript source, JSON documents (the test
// fixtures), SKILL.md files, and paragraphs in six other languages written for this bench.
//
// The estimate is read as users get it: `report.fit.before` of a one-turn conversation,
// less the same figure for a one-character turn (the framing). Prints, per kind of text,
// the total ratio estimate / real and the median and 90th-percentile error of a piece.
//
//   cd bench && npm install && node token-estimate.mjs

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lowerConversation } from 'promptloom';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as claude } from '@anthropic-ai/tokenizer';

const ROOT = new URL('..', import.meta.url).pathname;
const read = (p) => readFileSync(join(ROOT, p), 'utf8');
const files = (dir, ext) => {
  const out = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) out.push(...files(p, ext));
    else if (p.endsWith(ext)) out.push(p);
  }
  return out.sort();
};
/** Pieces of about `size` characters, cut at line ends. */
function pieces(text, size = 3000) {
  const out = [];
  let cur = '';
  for (const line of text.split('\n')) {
    if (cur.length + line.length > size && cur) {
      out.push(cur);
      cur = '';
    }
    cur += `${line}\n`;
  }
  if (cur.trim()) out.push(cur);
  return out;
}

const LANGUAGES = {
  German: 'Die Bibliothek wandelt Nachrichten, die ein Nutzer im Editor zusammengestellt hat, in Anfragen an verschiedene Sprachmodelle um. Jede Einstellung wird dort geschrieben, wo der Anbieter sie erwartet, und jede Abweichung wird im Bericht vermerkt. Wer von einem Anbieter zum anderen wechselt, muss seine Einstellungen nicht neu schreiben. Lange Unterhaltungen werden gekürzt, indem die ältesten Beiträge zuerst entfallen, ohne einen Werkzeugaufruf von seinem Ergebnis zu trennen.',
  French: "La bibliothèque transforme les messages composés dans l'éditeur en requêtes prêtes à envoyer à chaque fournisseur. Chaque réglage est écrit là où le fournisseur l'attend, et chaque écart figure dans le rapport avec un code stable. Une conversation trop longue pour la fenêtre du modèle perd d'abord ses tours les plus anciens, sans jamais séparer un appel d'outil de son résultat ni couper un tour en deux.",
  Russian: 'Библиотека превращает сообщения, собранные пользователем в редакторе, в запросы для разных языковых моделей. Каждый параметр записывается туда, где его ждёт поставщик, а каждое отклонение отмечается в отчёте со стабильным кодом. Слишком длинный разговор теряет сначала самые старые реплики, но вызов инструмента никогда не отделяется от его результата.',
  Chinese: '这个库把用户在编辑器里写好的消息转换成各个模型提供商都能直接发送的请求。每一个设置都写在提供商期望的位置，每一次调整都会在报告里留下一个稳定的代码。如果对话太长，超出了模型的上下文窗口，就先去掉最早的几轮，但绝不会把一次工具调用和它的结果分开，也不会把一轮对话切成两半。',
  Japanese: 'このライブラリは、エディタで作成されたメッセージを各プロバイダにそのまま送れるリクエストに変換します。すべての設定はプロバイダが期待する場所に書き込まれ、調整はすべて安定したコード付きでレポートに残ります。会話がモデルのコンテキストウィンドウに収まらない場合は、最も古いターンから順に省かれますが、ツール呼び出しとその結果が分かれることはありません。',
  Spanish: 'La biblioteca convierte los mensajes que un usuario compone en el editor en solicitudes listas para enviar a cada proveedor. Cada ajuste se escribe donde el proveedor lo espera, y cada cambio queda en el informe con un código estable. Cuando una conversación no cabe en la ventana del modelo, se quitan primero los turnos más antiguos, sin separar nunca una llamada a una herramienta de su resultado.',
};

const corpus = {
  'English prose (README, the guides, ARCHITECTURE)': ['README.md', ...readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'ARCHITECTURE.md'].map(read).flatMap((t) => pieces(t)),
  'Rust source': files('src/conversation', '.rs').concat(files('src/stream', '.rs')).flatMap((p) => pieces(read(p))),
  'JavaScript source': files('pkg/src', '.js').flatMap((p) => pieces(read(p))),
  'JSON documents': files('tests/conversation/inputs', '.json').concat(files('tests/lower/inputs', '.json')).flatMap((p) => pieces(read(p))),
  'SKILL.md files': files('tests/skills', '.md').flatMap((p) => pieces(read(p))),
  'Other languages (6)': Object.values(LANGUAGES).map((t) => `${t}\n${t}`),
};

const opts = { provider: 'openai-chat', model: 'gpt-4.1', fit: true };
const estimateOf = (text) => lowerConversation([{ role: 'user', parts: [{ type: 'text', text }] }], opts).report.fit.before;
const framing = estimateOf('a') - 1;
const estimate = (text) => estimateOf(text) - framing;

const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

const rows = [];
for (const [kind, texts] of Object.entries(corpus)) {
  const row = { kind, pieces: texts.length, est: 0, o: 0, c: 0, eo: [], ec: [] };
  for (const t of texts) {
    const e = estimate(t);
    const a = o200k(t);
    const b = claude(t);
    row.est += e;
    row.o += a;
    row.c += b;
    row.eo.push(Math.abs(e - a) / a);
    row.ec.push(Math.abs(e - b) / b);
  }
  rows.push(row);
}
console.log('\nThe context fit\'s token estimate against real tokenizers (estimate / real, total; |error| of one piece: median, p90)\n');
console.log('| text | pieces | estimate | o200k (OpenAI) | total vs o200k | median, p90 | Claude tokenizer | total vs Claude | median, p90 |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.kind} | ${r.pieces} | ${r.est} | ${r.o} | ${pct(r.est / r.o - 1)} | ${pct(quantile(r.eo, 0.5))}, ${pct(quantile(r.eo, 0.9))} | ${r.c} | ${pct(r.est / r.c - 1)} | ${pct(quantile(r.ec, 0.5))}, ${pct(quantile(r.ec, 0.9))} |`);
}
