"""The WASI component in Wasmtime (wasmtime-py, the reference runtime): every shared case
lowers to the body the Rust snapshots recorded, and errors come back as the WIT variant."""

import base64
import glob
import json
import os
import unittest

import wasmtime
import wasmtime.component as wc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "gemini"]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def snapshot_content(path):
    text = read(path)
    return text[text.index("\n---\n", 4) + 5 :]


def record(**fields):
    r = wc.Record()
    for k, v in fields.items():
        setattr(r, k, v)
    return r


def resolved_list(table):
    out = []
    for part, a in sorted(table.items(), key=lambda kv: int(kv[0])):
        if "text" in a:
            content = wc.Variant("text", a["text"])
        elif "bytes" in a:
            content = wc.Variant("bytes", record(data=base64.b64decode(a["bytes"]), mime=a.get("mime")))
        elif "payload" in a:
            content = wc.Variant("payload", json.dumps(a["payload"]))
        elif "error" in a:
            content = wc.Variant("failed", a["error"])
        else:
            content = wc.Variant("missing")
        out.append(record(part=int(part), content=content))
    return out


class Host:
    def __init__(self):
        engine = wasmtime.Engine()
        self.store = wasmtime.Store(engine)
        component = wc.Component.from_file(engine, os.path.join(ROOT, "target/component/promptloom.wasm"))
        linker = wc.Linker(engine)
        linker.add_wasip2()
        inst = linker.instantiate(self.store, component)
        iface = inst.get_export_index(self.store, "promptloom:core/lowering@0.1.0")
        self.lower_fn = inst.get_func(self.store, inst.get_export_index(self.store, "lower", iface))
        self.caps_fn = inst.get_func(self.store, inst.get_export_index(self.store, "default-capabilities", iface))

    def lower(self, message, provider, options, resolve):
        opts = record(
            provider=provider,
            system=options.get("system"),
            tools=json.dumps(options["tools"]) if "tools" in options else None,
            capabilities=json.dumps(options["capabilities"]) if "capabilities" in options else None,
            params=json.dumps(options["params"]) if "params" in options else None,
            resolved=resolved_list(resolve),
        )
        return self.lower_fn(self.store, json.dumps(message), opts)


class ComponentInWasmtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.host = Host()

    def test_every_shared_case(self):
        n = 0
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/lower/inputs/*.json"))):
            case = json.loads(read(path))
            name = os.path.basename(path)[:-5]
            for provider in PROVIDERS:
                snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"lowered@{name}.{provider}.snap"))
                body = snap.split("\n", 1)[0]
                report = json.loads(snap[snap.index("report:\n") + 8 :])
                out = self.host.lower(case["message"], provider, case.get("options", {}), case.get("resolve", {}))
                self.assertIsInstance(out, wc.Record, f"{name}/{provider}: {out}")
                self.assertEqual(out.body, body, f"{name}/{provider}")
                self.assertEqual(json.loads(out.report), report, f"{name}/{provider}")
                n += 1
        self.assertGreaterEqual(n, 100)

    def test_errors_are_wit_variants(self):
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/lower/errors/*.json"))):
            case = json.loads(read(path))
            name = os.path.basename(path)[:-5]
            lines = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"errors@{name}.json.snap")).strip().split("\n")
            for line in lines:
                provider, rest = line.split(": ", 1)
                out = self.host.lower(case["message"], provider, case.get("options", {}), {})
                if rest == "ok":
                    self.assertIsInstance(out, wc.Record)
                    continue
                want = json.loads(rest)
                tag = "".join("-" + c.lower() if c.isupper() else c for c in want["code"]).lstrip("-")
                self.assertIsInstance(out, wc.Variant, f"{name}/{provider}")
                self.assertEqual(out.tag, tag)
                self.assertEqual(out.payload.message, want["message"])
                self.assertEqual(json.loads(out.payload.details), want["details"])
                self.assertEqual(out.payload.path, want["details"].get("path"))
        alive = self.host.lower({"parts": [{"type": "text", "text": "alive"}]}, "gemini", {}, {})
        self.assertEqual(alive.body, '{"contents":[{"role":"user","parts":[{"text":"alive"}]}]}')

    def test_default_capabilities(self):
        caps = json.loads(self.host.caps_fn(self.host.store, "gemini"))
        self.assertIn("audio/flac", caps["audio"]["mimes"])


if __name__ == "__main__":
    unittest.main()
