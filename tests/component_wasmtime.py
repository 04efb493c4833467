"""The WASI component in Wasmtime (wasmtime-py, the reference runtime): every shared case
lowers to the body the Rust snapshots recorded, errors come back as the WIT variant, and the
compositor's message store works over a `wasi:keyvalue` bucket the host provides (a Python
dict here): submit → get → history → lower, version-1 rows read as version 2, and a store
that fails mid-write leaves nothing visible."""

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


class Func:
    """An exported function whose `result<T, error>` comes back as T, or as the `error`
    record itself. wasmtime-py tags a result only when its two sides are the same kind of
    Python value (a record and the error record: `Variant("ok" | "err", …)`); this removes
    the tag, so every test reads an error the same way (`e.code`, `error_class(e)`)."""

    def __init__(self, f):
        self.f = f

    def __call__(self, store, *args):
        out = self.f(store, *args)
        if isinstance(out, wc.Variant) and out.tag in ("ok", "err"):
            return out.payload
        return out


def is_error(v):
    """Whether a value is the WIT `error` record."""
    return isinstance(v, wc.Record) and hasattr(v, "code") and hasattr(v, "details") and hasattr(v, "message")


def error_class(e):
    """The `class` of a WIT `error` record (a Python keyword: read by name)."""
    return getattr(e, "class")


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


class KeyValue:
    """`wasi:keyvalue/store@0.2.0-draft` over Python dicts (one per bucket name)."""

    def __init__(self):
        self.buckets = {}
        self.names = []
        self.fail_after = None  # raise on the n-th next set
        self.writes = 0  # sets and deletes so far
        self.fail_at = None  # from this write on (1-based, counted in `writes`), every write fails
        self.largest = 0  # the largest value the guest ever passed in one set

    def add_to(self, linker):
        with linker.root() as root:
            with root.add_instance("wasi:keyvalue/store@0.2.0-draft") as kv:
                kv.add_resource("bucket", wc.ResourceType.host(1), lambda store, rep: None)
                kv.add_func("open", self.open)
                kv.add_func("[method]bucket.get", self.get)
                kv.add_func("[method]bucket.set", self.set)
                kv.add_func("[method]bucket.delete", self.delete)
                kv.add_func("[method]bucket.exists", self.exists)
                kv.add_func("[method]bucket.list-keys", self.list_keys)

    def bucket(self, store, res):
        # The borrowed handle must be released before the call returns.
        host = res.to_host(store)
        rep = host.rep
        host.close()
        res.close()
        return self.buckets[self.names[rep]]

    def open(self, store, name):
        if name not in self.buckets:
            self.buckets[name] = {}
        self.names.append(name)
        return wc.ResourceHost.own(len(self.names) - 1, 1)

    def get(self, store, res, key):
        return self.bucket(store, res).get(key)

    def write_fault(self):
        self.writes += 1
        return self.fail_at is not None and self.writes >= self.fail_at

    def set(self, store, res, key, value):
        bucket = self.bucket(store, res)
        if self.write_fault():
            return wc.Variant("other", "disk full")
        self.largest = max(self.largest, len(value))
        if self.fail_after is not None:
            if self.fail_after == 0:
                return wc.Variant("other", "disk full")
            self.fail_after -= 1
        bucket[key] = bytes(value)
        return None

    def delete(self, store, res, key):
        bucket = self.bucket(store, res)
        if self.write_fault():
            return wc.Variant("other", "disk full")
        bucket.pop(key, None)
        return None

    def exists(self, store, res, key):
        return key in self.bucket(store, res)

    def list_keys(self, store, res, cursor):
        keys = sorted(self.bucket(store, res))
        start = cursor or 0
        page = keys[start : start + 50]
        nxt = start + 50 if start + 50 < len(keys) else None
        return record(keys=page, cursor=nxt)


class Handlers:
    """`promptloom:core/handlers`: each test sets `handlers` (name -> function of (input,
    context) returning an output, or `("err", failure)`), the clock and the waits."""

    def __init__(self):
        self.handlers = {}
        self.t = 1_000_000.0
        self.sleeps = []
        # Agent and artifact runs: `send(provider, body, step)` -> bytes, `tools` (name ->
        # function of the call; an exception is a failure), `complete(request)`,
        # `execute(executor, input)`.
        self.send = None
        self.tools = {}
        self.complete = None
        self.execute = None

    def add_to(self, linker):
        with linker.root() as root:
            with root.add_instance("promptloom:core/handlers@0.1.0") as h:
                h.add_func("invoke", self.invoke)
                h.add_func("now-ms", lambda store: self.t)
                h.add_func("sleep-ms", self.sleep)
                h.add_func("send-request", self.send_request)
                h.add_func("call-tool", self.call_tool)
                h.add_func("complete", self.complete_request)
                h.add_func("execute", self.execute_request)

    def send_request(self, store, provider, body, step):
        # result<list<u8>, string>: its cases are told apart by type (bytes / str), so
        # wasmtime-py takes the value itself, not a Variant.
        try:
            return bytes(self.send(provider, body, step))
        except Exception as e:  # noqa: BLE001 - the host's failure goes back as text
            return str(e)

    def call_tool(self, store, name, call):
        t = self.tools.get(name)
        if t is None:
            return None
        try:
            return wc.Variant("ok", json.dumps(t(json.loads(call))))
        except Exception as e:  # noqa: BLE001
            return wc.Variant("err", str(e))

    def complete_request(self, store, request):
        try:
            return wc.Variant("ok", json.dumps(self.complete(json.loads(request))))
        except Exception as e:  # noqa: BLE001
            return wc.Variant("err", str(e))

    def execute_request(self, store, executor, input):
        try:
            return wc.Variant("ok", json.dumps(self.execute(executor, json.loads(input))))
        except Exception as e:  # noqa: BLE001
            return wc.Variant("err", str(e))

    def sleep(self, store, ms):
        self.sleeps.append(ms)

    def invoke(self, store, contract, version, input, context):
        f = self.handlers.get(f"{contract}@{version}") or self.handlers.get(contract)
        if f is None:
            return wc.Variant("err", json.dumps({"message": "no handler", "retryable": False}))
        out = f(json.loads(input), json.loads(context))
        if isinstance(out, tuple) and out[0] == "err":
            return wc.Variant("err", json.dumps(out[1]))
        return wc.Variant("ok", json.dumps(out))


class Host:
    def __init__(self):
        engine = wasmtime.Engine()
        self.store = wasmtime.Store(engine)
        # The standard WASI context every component host gives (std's HashMap seeds come
        # from wasi:random, which MiniJinja's environment asks for once).
        self.store.set_wasi(wasmtime.WasiConfig())
        component = wc.Component.from_file(engine, os.path.join(ROOT, "target/component/promptloom.wasm"))
        linker = wc.Linker(engine)
        linker.add_wasip2()
        self.kv = KeyValue()
        self.kv.add_to(linker)
        self.handlers = Handlers()
        self.handlers.add_to(linker)
        inst = linker.instantiate(self.store, component)
        self.inst = inst
        iface = inst.get_export_index(self.store, "promptloom:core/lowering@0.1.0")
        self.lower_fn = Func(inst.get_func(self.store, inst.get_export_index(self.store, "lower", iface)))
        self.caps_fn = Func(inst.get_func(self.store, inst.get_export_index(self.store, "default-capabilities", iface)))
        self.requests_fn = Func(inst.get_func(self.store, inst.get_export_index(self.store, "resolve-requests", iface)))
        lo = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, iface)))
        self.conversation = {n: lo(n) for n in ["lower-conversation", "[constructor]conversation", "[method]conversation.append", "[method]conversation.lower", "[method]conversation.len"]}
        comp = inst.get_export_index(self.store, "promptloom:core/compositor@0.1.0")
        f = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, comp)))
        self.parse_input = f("parse-input")
        self.open_store = f("[static]message-store.open")
        self.store_fns = {n: f(f"[method]message-store.{n}") for n in ["submit", "get", "history", "list", "blob", "lower"]}
        sk = inst.get_export_index(self.store, "promptloom:core/skills@0.1.0")
        g = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, sk)))
        self.skills = {n: g(n) for n in ["validate-skill", "import-package", "import-skill-md", "export-skill-md", "model-family", "decide", "seed-skill-specs"]}
        self.skills["open-store"] = g("[static]skill-store.open")
        self.skills["open-catalog"] = g("[static]skill-catalog.open")
        for n in ["list", "get", "get-by-name", "get-artifacts", "get-artifact", "create", "put", "update", "delete", "add-artifact", "update-artifact", "delete-artifact", "seed", "skill-specs"]:
            self.skills["store." + n] = g(f"[method]skill-store.{n}")
        for n in ["list", "get", "load", "match", "decide", "refresh", "sync-etag", "apply-sync", "skill-specs"]:
            self.skills["catalog." + n] = g(f"[method]skill-catalog.{n}")
        for n in ["record-trace", "export-traces", "export-dspy-dataset", "trace-page", "call-authoring-tool"]:
            self.skills["store." + n] = g(f"[method]skill-store.{n}")
        self.store_fns["record-invocation"] = f("[method]message-store.record-invocation")
        self.store_fns["append-turn"] = f("[method]message-store.append-turn")
        self.store_fns["thread"] = f("[method]message-store.thread")
        self.store_fns["append-turns"] = f("[method]message-store.append-turns")
        for n in ["save-draft", "draft"]:
            self.store_fns[n] = f(f"[method]message-store.{n}")
        ch = inst.get_export_index(self.store, "promptloom:core/chat@0.1.0")
        self.chat = {n: Func(inst.get_func(self.store, inst.get_export_index(self.store, n, ch))) for n in ["view", "branch"]}
        self.store_fns["page"] = f("[method]message-store.page")
        self.store_fns["invocations"] = f("[method]message-store.invocations")
        co = inst.get_export_index(self.store, "promptloom:core/composer@0.1.0")
        h = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, co)))
        ar = inst.get_export_index(self.store, "promptloom:core/arbiter@0.1.0")
        k = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, ar)))
        self.arbiter = {n: k(n) for n in ["validate-skill-spec", "load-skill-specs", "to-mermaid", "call-proposal", "[method]arbiter.step-offer", "[static]skill-registry.build", "[method]skill-registry.names", "[method]skill-registry.summary", "[static]arbiter.create", "[method]arbiter.start", "[method]arbiter.propose", "[method]arbiter.run", "[method]arbiter.replay", "[static]session.open", "[method]session.start-skill", "[method]session.propose", "[method]session.lane-event", "[method]session.heartbeat", "[method]session.stop", "[method]session.hierarchy", "[method]session.log", "[method]session.run", "[method]session.lane", "[method]session.stale", "session-machines", "list-proposals", "approval-log", "approve-proposal", "reject-proposal", "install-approved"]}
        gw = inst.get_export_index(self.store, "promptloom:core/gateway@0.1.0")
        q = lambda name: Func(inst.get_func(self.store, inst.get_export_index(self.store, name, gw)))
        self.gateway = {n: q(n) for n in ["check-contract", "apply-state", "records-to-otel", "[constructor]contract-registry", "[method]contract-registry.register", "[method]contract-registry.resolve", "[method]contract-registry.set-canary", "[method]contract-registry.planner-section", "[method]contract-registry.review", "[constructor]gateway", "[method]gateway.call", "[method]gateway.records", "[method]gateway.verify"]}
        self.composer = {n: h(n) for n in ["compose", "nested-request", "lower-composition", "lower-model-request", "model-answer", "authoring-tools", "pick-artifact", "run-order", "verify-invocation", "dspy-optimize-call", "run-artifact", "[static]artifact-run.create", "[method]artifact-run.first", "[method]artifact-run.next", "dspy-stamp", "dspy-stale", "[static]prepared-skill.prepare", "[method]prepared-skill.name", "[method]prepared-skill.compose"]}

    def gw(self, name, *args):
        return self.gateway[name](self.store, *args)

    def ar(self, name, *args):
        return self.arbiter[name](self.store, *args)

    def co(self, name, *args):
        return self.composer[name](self.store, *args)

    def sk(self, name, *args):
        return self.skills[name](self.store, *args)

    def call(self, name, res, *args):
        return self.store_fns[name](self.store, res, *args)

    def lower(self, message, provider, options, resolve, by_provider=None):
        options = {**options, **((by_provider or {}).get(provider, {}))}
        opts = record(
            provider=provider,
            system=options.get("system"),
            tools=json.dumps(options["tools"]) if "tools" in options else None,
            capabilities=json.dumps(options["capabilities"]) if "capabilities" in options else None,
            settings=settings_json(options),
            resolved=resolved_list(resolve),
            limits=json.dumps(options["limits"]) if "limits" in options else None,
        )
        return self.lower_fn(self.store, json.dumps(message), opts)


def settings_json(o):
    """The settings of an options object: every field that is not one of the record's own."""
    s = {k: v for k, v in o.items() if k not in ("provider", "system", "tools", "capabilities", "cache", "limits")}
    return json.dumps(s) if s else None


def conversation_options(provider, o):
    return record(
        provider=provider,
        system=o.get("system"),
        tools=json.dumps(o["tools"]) if "tools" in o else None,
        capabilities=json.dumps(o["capabilities"]) if "capabilities" in o else None,
        settings=settings_json(o),
        cache=json.dumps(o["cache"]) if "cache" in o else None,
        limits=json.dumps(o["limits"]) if "limits" in o else None,
    )


def conversation_cases():
    """The conversation corpus with the Rust snapshots' bodies and reports."""
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/conversation/inputs/*.json"))):
        case = json.loads(read(path))
        name = os.path.basename(path)[:-5]
        for provider in PROVIDERS:
            snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"conversation__lowered@{name}.{provider}.snap"))
            yield name, provider, case, snap.split("\n", 1)[0], json.loads(snap[snap.index("report:\n") + 8 :])


class ConversationInWasmtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.host = Host()

    def test_every_conversation_case_stateless_and_resource(self):
        h = self.host
        n = 0
        for name, provider, case, body, report in conversation_cases():
            resolve = case.get("resolve", [])
            answers = [record(turn=i, resolved=resolved_list(t or {})) for i, t in enumerate(resolve)]
            opts = conversation_options(provider, case.get("options", {}))
            out = h.conversation["lower-conversation"](h.store, json.dumps(case["turns"]), opts, answers)
            self.assertIsInstance(out, wc.Record, f"{name}/{provider}: {out}")
            self.assertEqual(out.body, body, f"{name}/{provider}")
            self.assertEqual(json.loads(out.report), report, f"{name}/{provider}")
            conv = h.conversation["[constructor]conversation"](h.store, None)
            for i, t in enumerate(case["turns"]):
                table = resolve[i] if i < len(resolve) and resolve[i] else {}
                h.conversation["[method]conversation.append"](h.store, conv, json.dumps(t), resolved_list(table))
            again = h.conversation["[method]conversation.lower"](h.store, conv, opts)
            self.assertEqual(again.body, body, f"{name}/{provider} (resource)")
            self.assertEqual(h.conversation["[method]conversation.len"](h.store, conv), len(case["turns"]))
            conv.drop(h.store)
            n += 1
        self.assertGreaterEqual(n, 70)

    def test_errors_name_turn_and_part_and_the_instance_keeps_answering(self):
        h = self.host
        bad = json.dumps([{"role": "user", "parts": [{"type": "text", "text": "a"}]}, {"role": "tool", "parts": [{"type": "tool-result", "output": 1}]}])
        out = h.conversation["lower-conversation"](h.store, bad, conversation_options("anthropic", {}), [])
        self.assertTrue(is_error(out))
        self.assertEqual(out.code, "invalid-message")
        self.assertEqual(error_class(out), "invalid")
        self.assertEqual(out.path, "turns[1].parts[0].call_id")
        name, provider, case, body, _ = next(conversation_cases())
        ok = h.conversation["lower-conversation"](h.store, json.dumps(case["turns"]), conversation_options(provider, case.get("options", {})), [])
        self.assertEqual(ok.body, body)

    def test_thread_in_the_keyvalue_store(self):
        h = self.host
        res = h.open_store(h.store, "thread-wasmtime")
        for name, provider, case, body, _ in conversation_cases():
            if name == "tool_round_trip" and provider == "openai-responses":
                break
        for t in case["turns"]:
            r = h.call("append-turn", res, json.dumps(t), json.dumps({"session": "chat", "now": 3}))
            self.assertIsInstance(r, str, r)
        thread = json.loads(h.call("thread", res, "chat"))
        self.assertEqual([t["role"] for t in thread], ["user", "assistant", "tool", "assistant", "user"])
        out = h.conversation["lower-conversation"](h.store, json.dumps(thread), conversation_options(provider, case.get("options", {})), [])
        self.assertEqual(out.body, body)


class ChatInWasmtime(unittest.TestCase):
    """The chat rules (`promptloom:core/chat`): the view of every thread is the Rust
    snapshot's exact JSON, the branch plans, and a branch copied with `append-turns`."""

    @classmethod
    def setUpClass(cls):
        cls.host = Host()

    def test_views_branches_and_a_copy(self):
        h = self.host
        n = 0
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/conversation/inputs/*.json"))):
            name = os.path.basename(path)[:-5]
            turns = json.loads(read(path))["turns"]
            want = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"chat__the_view_of_every_thread@{name}.snap")).split("\n", 1)[0]
            self.assertEqual(h.chat["view"](h.store, json.dumps(turns), 0), want, name)
            n += 1
        self.assertGreaterEqual(n, 29)
        thread = json.loads(read(os.path.join(ROOT, "tests/conversation/inputs/tool_round_trip.json")))["turns"]
        plan = h.chat["branch"](h.store, json.dumps(thread[:4]), "chat", None, "n1")
        self.assertEqual((plan.keep, plan.session), (1, "chat~n1"))
        plan = h.chat["branch"](h.store, json.dumps(thread), "chat", None, "n1")
        self.assertEqual((plan.keep, plan.session), (5, "chat"))
        err = h.chat["branch"](h.store, json.dumps(thread), "chat", "turn-1", "n")
        self.assertTrue(is_error(err))
        self.assertEqual(err.code, "invalid-request")
        self.assertEqual(h.chat["view"](h.store, "[1]", 0).code, "invalid-message")
        res = h.open_store(h.store, "chat-wasmtime")
        for t in thread:
            h.call("append-turn", res, json.dumps(t), json.dumps({"session": "chat", "now": 3}))
        stored = json.loads(h.call("thread", res, "chat"))
        out = json.loads(h.call("append-turns", res, json.dumps(stored[:3]), json.dumps({"session": "chat~n1"})))
        self.assertEqual(out["ids"], ["chat~n1/0000000001", "chat~n1/0000000002", "chat~n1/0000000003"])
        self.assertEqual(len(json.loads(h.call("thread", res, "chat~n1"))), 3)
        self.assertEqual(len(json.loads(h.call("thread", res, "chat"))), 5)
        # A reply whose host went away: its draft comes back cut, and stands until appended.
        self.assertIsNone(h.call("draft", res, "chat"))
        so_far = {"turn": {"role": "assistant", "parts": [{"type": "text", "text": "Hel"}, {"type": "tool-call", "id": "c9", "name": "f", "input": {}}]}}
        self.assertTrue(h.call("save-draft", res, "chat", json.dumps(so_far)))
        draft = json.loads(h.call("draft", res, "chat"))["turn"]
        self.assertEqual((draft["parts"], draft["metadata"]["cut"]), ([{"type": "text", "text": "Hel"}], True))
        h.call("append-turn", res, json.dumps(draft), json.dumps({"session": "chat", "now": 4}))
        self.assertIsNone(h.call("draft", res, "chat"))
        self.assertTrue(h.call("save-draft", res, "chat", json.dumps({"run": "r1"})))
        self.assertEqual(json.loads(h.call("draft", res, "chat"))["run"], "r1")
        self.assertFalse(h.call("save-draft", res, "chat", json.dumps({"turn": {"role": "assistant", "parts": []}})))
        h.call("save-draft", res, "chat", json.dumps(so_far))
        self.assertFalse(h.call("save-draft", res, "chat", "{}"))  # nothing to keep: dropped
        self.assertIsNone(h.call("draft", res, "chat"))
        self.assertEqual(h.call("save-draft", res, "chat", "{").code, "invalid-message")


def composer_fixtures():
    """The composer corpus: packages, requests (package included), the Rust snapshots."""
    packages = {}
    for d in ["tests/composer/skills", "tests/skills/packages"]:
        for f in sorted(glob.glob(os.path.join(ROOT, d, "*.json"))):
            try:
                packages[os.path.basename(f)[:-5]] = json.loads(read(f))
            except ValueError:
                pass
    requests, expected = {}, {}
    for f in sorted(glob.glob(os.path.join(ROOT, "tests/composer/requests/*.json"))):
        name = os.path.basename(f)[:-5]
        case = json.loads(read(f))
        requests[name] = dict(case["request"], skill_package=packages[case["skill"]])
        expected[name] = json.loads(snapshot_content(os.path.join(ROOT, f"tests/snapshots/composer__golden_compositions@{name}.json.snap")))
    return packages, requests, expected


def response_cases():
    """The recorded responses with the Rust snapshots' events and turns (the oracle line)."""
    for provider in PROVIDERS:
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/response", provider, "*"))):
            name = os.path.basename(path)
            snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"response__responses_parse_to_events_and_turns@{provider}__{name}.snap"))
            events, turn = snap.split("\n")[1].split("\u0000")
            error = snap[snap.index("\nerror: ") + 8 :].split("\n", 1)[0]
            with open(path, "rb") as f:
                yield f"{provider}/{name}", provider, f.read(), json.loads(events), json.loads(turn), None if error == "none" else json.loads(error)


def target_options(base_url=None, model=None, stream=True, api_key=None, api_version=None, browser=False):
    return record(**{"base-url": base_url, "model": model, "stream": stream, "api-key": api_key, "api-version": api_version, "browser": browser})


class ResponseInWasmtime(unittest.TestCase):
    """The response parser resource and the transport rules, as a WASI host doing its own HTTP uses them."""

    @classmethod
    def setUpClass(cls):
        cls.host = Host()
        h = cls.host
        iface = h.inst.get_export_index(h.store, "promptloom:core/response@0.1.0")
        r = lambda name: Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, name, iface)))
        cls.fns = {n: r(n) for n in ["[constructor]response-parser", "[static]response-parser.for-request", "parse-response-for", "[method]response-parser.push", "[method]response-parser.end", "[method]response-parser.finish", "[method]response-parser.first-error", "parse-response", "request-target", "provider-error", "default-retry-policy", "retry-delay", "[constructor]event-stream-writer", "[method]event-stream-writer.open", "[method]event-stream-writer.events", "[method]event-stream-writer.close", "[method]event-stream-writer.fail", "[constructor]event-stream-reader", "[method]event-stream-reader.push", "[method]event-stream-reader.end", "[method]event-stream-reader.finish", "[method]event-stream-reader.first-error", "[method]event-stream-reader.last-event-id", "[method]event-stream-reader.provider", "[method]event-stream-reader.reconnect", "[method]event-stream-reader.complete", "[constructor]event-stream-log", "[method]event-stream-log.push", "[method]event-stream-log.since", "[method]event-stream-log.tail", "[method]event-stream-log.finished"]}

    def call(self, name, *args):
        return self.fns[name](self.host.store, *args)

    def test_a_json_answer_streams_as_object_edits(self):
        cases = sorted(glob.glob(os.path.join(ROOT, "tests/object/*.json")))
        self.assertGreaterEqual(len(cases), 5)
        for path in cases:
            c = json.loads(read(path))
            p = self.call("[static]response-parser.for-request", c["provider"], c["request"])
            body = c["stream"].encode()
            deltas = 0
            for i in range(0, len(body), 9):
                deltas += sum(1 for e in json.loads(self.call("[method]response-parser.push", p, body[i : i + 9])) if e["type"] == "object-delta")
            self.call("[method]response-parser.end", p)
            self.assertGreater(deltas, 0, path)
            self.assertEqual(json.loads(self.call("[method]response-parser.finish", p))["metadata"]["object"], c["object"], path)
            self.assertIsNone(self.call("[method]response-parser.first-error", p), path)
            whole = self.call("parse-response-for", c["provider"], c["request"], body)
            self.assertEqual(json.loads(whole)["metadata"]["object"], c["object"], path)

    def test_every_recorded_response_whole_and_in_chunks(self):
        n = 0
        for name, provider, body, events, turn, error in response_cases():
            for size in (len(body) or 1, 7, 1):
                p = self.call("[constructor]response-parser", provider)
                got = []
                for i in range(0, len(body), size):
                    got += json.loads(self.call("[method]response-parser.push", p, body[i : i + size]))
                got += json.loads(self.call("[method]response-parser.end", p))
                self.assertEqual(got, events, f"{name} in chunks of {size}")
                self.assertEqual(json.loads(self.call("[method]response-parser.finish", p)), turn, name)
                err = self.call("[method]response-parser.first-error", p)
                if error is None:
                    self.assertIsNone(err, name)
                else:
                    self.assertEqual(err.code, "".join("-" + c.lower() if c.isupper() else c for c in error["code"]).lstrip("-"), name)
                p.drop(self.host.store)
            n += 1
        self.assertGreaterEqual(n, 25)

    def test_a_broken_event_stream_picks_up_from_the_log(self):
        """A WASI server keeps each relayed stream in an event-stream-log; a reader whose connection broke reconnects from it and gets every event once."""
        runs = 0
        for name, provider, body, events, turn, error in response_cases():
            w = self.call("[constructor]event-stream-writer", provider)
            wire = self.call("[method]event-stream-writer.open", w)
            wire += self.call("[method]event-stream-writer.events", w, json.dumps(events))
            wire += self.call("[method]event-stream-writer.close", w, json.dumps(turn))
            for cut in (0, 7, len(wire) // 2):
                log = self.call("[constructor]event-stream-log")
                self.call("[method]event-stream-log.push", log, wire[: len(wire) * 3 // 4])
                r = self.call("[constructor]event-stream-reader")
                data = wire.encode()
                got = json.loads(self.call("[method]event-stream-reader.push", r, data[:cut]))
                self.call("[method]event-stream-reader.reconnect", r)
                last = self.call("[method]event-stream-reader.last-event-id", r)
                text, at = self.call("[method]event-stream-log.since", log, last)
                # A host restarted: a new log fed the text it kept is the same recording.
                again = self.call("[constructor]event-stream-log")
                self.call("[method]event-stream-log.push", again, wire[: len(wire) * 3 // 4])
                self.assertEqual(self.call("[method]event-stream-log.since", again, last), (text, at), name)
                again.drop(self.host.store)
                got += json.loads(self.call("[method]event-stream-reader.push", r, text.encode()))
                self.call("[method]event-stream-log.push", log, wire[len(wire) * 3 // 4 :])
                self.assertTrue(self.call("[method]event-stream-log.finished", log), name)
                text, at = self.call("[method]event-stream-log.tail", log, at)
                got += json.loads(self.call("[method]event-stream-reader.push", r, text.encode()))
                self.assertTrue(self.call("[method]event-stream-reader.complete", r), name)
                got += json.loads(self.call("[method]event-stream-reader.end", r))
                self.assertEqual(got, events, f"{name} broken at {cut}")
                self.assertEqual(json.loads(self.call("[method]event-stream-reader.finish", r)), turn, name)
                r.drop(self.host.store)
                log.drop(self.host.store)
                runs += 1
            w.drop(self.host.store)
        self.assertGreaterEqual(runs, 120)

    def test_a_relayed_event_stream_reads_back_the_same(self):
        """A WASI server relays each recorded response as an event stream; a reader gets the same events and turn."""
        n = 0
        for name, provider, body, events, turn, error in response_cases():
            w = self.call("[constructor]event-stream-writer", provider)
            wire = self.call("[method]event-stream-writer.open", w)
            wire += self.call("[method]event-stream-writer.events", w, json.dumps(events))
            if error is not None and error["code"] != "InvalidToolInput":
                err = self.call("provider-error", provider, 500, "{}", None)
                wire += self.call("[method]event-stream-writer.fail", w, err, json.dumps(turn))
            else:
                wire += self.call("[method]event-stream-writer.close", w, json.dumps(turn))
            self.assertEqual(self.call("[method]event-stream-writer.close", w, json.dumps(turn)), "", name)
            r = self.call("[constructor]event-stream-reader")
            data = wire.encode()
            got = []
            for i in range(0, len(data), 11):
                got += json.loads(self.call("[method]event-stream-reader.push", r, data[i : i + 11]))
            got += json.loads(self.call("[method]event-stream-reader.end", r))
            self.assertEqual(got, events, name)
            self.assertEqual(json.loads(self.call("[method]event-stream-reader.finish", r)), turn, name)
            first = self.call("[method]event-stream-reader.first-error", r)
            if error is None:
                self.assertIsNone(first, name)
            else:
                self.assertEqual(first.message, error["message"], name)
            self.assertEqual(self.call("[method]event-stream-reader.last-event-id", r), str(len(events) + 1), name)
            self.assertEqual(self.call("[method]event-stream-reader.provider", r), provider, name)
            r.drop(self.host.store)
            w.drop(self.host.store)
            n += 1
        self.assertGreaterEqual(n, 40)
        # Cut before its turn: stream-truncated, the text kept.
        w = self.call("[constructor]event-stream-writer", "openai-chat")
        wire = self.call("[method]event-stream-writer.open", w) + self.call("[method]event-stream-writer.events", w, '[{"type":"text-delta","part":0,"text":"so far"}]')
        r = self.call("[constructor]event-stream-reader")
        self.call("[method]event-stream-reader.push", r, wire.encode())
        self.assertEqual([e["type"] for e in json.loads(self.call("[method]event-stream-reader.end", r))], ["error", "finish"])
        self.assertEqual(self.call("[method]event-stream-reader.first-error", r).code, "stream-truncated")
        self.assertEqual(json.loads(self.call("[method]event-stream-reader.finish", r))["parts"][0]["text"], "so far")
        bad = self.call("[method]event-stream-writer.events", w, '[{"part":1}]')
        self.assertEqual(bad.code, "invalid-options")

    def test_parse_response_and_provider_errors(self):
        out = self.call("parse-response", "anthropic", read(os.path.join(ROOT, "tests/response/anthropic/text.json")).encode())
        self.assertEqual(json.loads(out)["parts"][0]["text"], "Hi! My name is Claude.")
        err = self.call("parse-response", "gemini", read(os.path.join(ROOT, "tests/response/gemini/error_body.json")).encode())
        self.assertEqual(err.code, "rate-limited")
        self.assertEqual(json.loads(err.details)["retry_after_ms"], 45000)
        busy = self.call("provider-error", "anthropic", 529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', None)
        self.assertEqual(busy.code, "overloaded")
        policy = self.call("default-retry-policy")
        self.assertEqual(getattr(policy, "max-retries"), 2)
        self.assertEqual(self.call("retry-delay", busy, 0, 0.0, policy), 250)
        self.assertIsNone(self.call("retry-delay", busy, 2, 0.0, policy))
        later = self.call("provider-error", "openai-chat", 429, "{}", 1500)
        self.assertEqual(self.call("retry-delay", later, 0, 0.9, policy), 1500)
        bad = self.call("provider-error", "openai-chat", 400, "{}", None)
        self.assertIsNone(self.call("retry-delay", bad, 0, 0.5, policy))

    def test_request_targets(self):
        opts = target_options(model="gemini-2.5-flash", api_key="k")
        t = self.call("request-target", "gemini", opts)
        self.assertTrue(t.url.endswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"))
        self.assertIn(("x-goog-api-key", "k"), [tuple(x) for x in t.headers])
        bad = self.call("request-target", "gemini", target_options())
        self.assertEqual(bad.code, "invalid-options")
        a = self.call("request-target", "anthropic", target_options(base_url="http://127.0.0.1:1/", api_key="k", browser=True))
        self.assertEqual(a.url, "http://127.0.0.1:1/v1/messages")
        self.assertIn(("anthropic-dangerous-direct-browser-access", "true"), [tuple(x) for x in a.headers])

    def test_hostile_bytes_end_in_errors_and_the_instance_answers(self):
        name, provider, body, events, turn, _ = next(response_cases())
        for junk in (b"\xff\xfe" * 100, b"data: {" * 1000, b"[" * 5000 + b"]", b"{" * 200, b"event: x\ndata: []\n\n"):
            p = self.call("[constructor]response-parser", provider)
            self.call("[method]response-parser.push", p, junk)
            json.loads(self.call("[method]response-parser.finish", p))
            self.assertIsNotNone(self.call("[method]response-parser.first-error", p))
            p.drop(self.host.store)
        p = self.call("[constructor]response-parser", provider)
        self.call("[method]response-parser.push", p, body)
        self.assertEqual(json.loads(self.call("[method]response-parser.finish", p)), turn)
        p.drop(self.host.store)


class ComposerInWasmtime(unittest.TestCase):
    """The Skill Composer in Wasmtime: every fixture composes to the Rust snapshot (errors
    as WIT variants), the planner's step protocol, dispatch with the fallback, assertions,
    traces in a bucket, invocation records beside the turn, the authoring tools."""

    @classmethod
    def setUpClass(cls):
        cls.host = Host()
        cls.packages, cls.requests, cls.expected = composer_fixtures()

    def test_run_order_is_the_cores(self):
        package = read(os.path.join(ROOT, "tests/skills/packages/consistency-checker.json"))
        skill = json.dumps(json.loads(self.host.sk("import-package", package, "2026-11-22T10:00:00Z"))["skill"])
        self.assertEqual(self.host.co("run-order", skill), ["Overview", "Cross-Reference Script", "DSPy Checker"])
        self.assertEqual(self.host.co("run-order", "[").code, "invalid-request")

    def test_golden_compositions_and_variants(self):
        h = self.host
        kebab = lambda code: "".join("-" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(code))
        def compose(req):
            return h.co("compose", json.dumps(req))

        for name, want in self.expected.items():
            out = compose(self.requests[name])
            if "error" in want:
                self.assertEqual(out.code, kebab(want["error"]["code"]), name)
                self.assertEqual(out.message, want["error"]["message"], name)
                self.assertEqual(json.loads(out.details), want["error"]["details"], name)
            elif "needs_shape" in want:
                self.assertEqual(out.tag, "needs-shape")
                self.assertEqual(json.loads(out.payload), want["needs_shape"])
            else:
                self.assertEqual(out.tag, "composed", name)
                self.assertEqual(json.loads(out.payload), want["composition"], name)
        # Replay: the record recomposes byte-identically; a removed memory item is named.
        rn = self.requests["release-notes-memory-marks"]
        rec = json.loads(compose(rn).payload)["invocation_record"]
        same = json.loads(h.co("verify-invocation", json.dumps(rec), json.dumps(rn["skill_package"]), json.dumps(rn["memory_context"])))
        self.assertEqual((same["identical"], same["changes"]), (True, []))
        gone = json.loads(h.co("verify-invocation", json.dumps(rec), json.dumps(rn["skill_package"]), json.dumps(rn["memory_context"][:1])))
        self.assertEqual([(c["kind"], c["change"], c["id"]) for c in gone["changes"]], [("memory", "missing", "mem-3")])
        self.assertFalse(gone["identical"])
        self.assertEqual(h.co("verify-invocation", "{}", json.dumps(rn["skill_package"]), "").code, "invalid-request")
        answered = dict(self.requests["planner-needs-shape"], delegated_shape={"kind": "loop", "tools": ["web_search"]})
        c = json.loads(compose(answered).payload)
        self.assertEqual(([t["name"] for t in c["subgraph"]["tool_availability"]], c["subgraph"]["decided_by"]), (["web_search"], "model"))
        self.assertEqual(len(json.loads(h.co("authoring-tools"))), 4)

    def test_prepared_skill_composes_as_compose(self):
        """A prepared skill gives every fixture's step (or error) as `compose` does; a package
        that does not validate fails when prepared, with compose's variant and message."""
        h = self.host
        def tagged(out):
            if is_error(out):
                return (error_class(out), out.code, out.message, out.details)
            return (out.tag, out.payload)
        prepared = refused = 0
        for name in self.expected:
            req = self.requests[name]
            invocation = {k: v for k, v in req.items() if k != "skill_package"}
            p = h.co("[static]prepared-skill.prepare", json.dumps(req["skill_package"]))
            want = tagged(h.co("compose", json.dumps(req)))
            if is_error(p):
                # result<prepared-skill, error>: the error record itself, or the resource.
                self.assertEqual((error_class(p), p.code, p.message), want[:3], name)
                refused += 1
                continue
            res = p
            self.assertEqual(h.co("[method]prepared-skill.name", res), req["skill_package"]["name"], name)
            self.assertEqual(tagged(h.co("[method]prepared-skill.compose", res, json.dumps(invocation))), want, name)
            self.assertEqual(tagged(h.co("[method]prepared-skill.compose", res, json.dumps(invocation))), want, name)
            prepared += 1
        self.assertTrue(prepared >= 12 and refused >= 1, (prepared, refused))

    def test_dispatch_assertions_traces_and_records(self):
        h = self.host
        st = h.sk("open-store", "composer-wasmtime")
        h.sk("store.create", st, json.dumps(self.packages["full-contract"]), NOW)
        summary = json.dumps(json.loads(h.sk("store.list", st))[0])
        ref = h.co("pick-artifact", summary, "DSPy Auditor", "", "")
        self.assertEqual(h.co("pick-artifact", summary, "Nope", "", "").code, "not-found")
        # Optimisation and re-optimisation.
        dspy_art = h.sk("store.get-artifact", st, json.loads(ref)["id"])
        m26 = json.dumps({"version": "dspy-2.6"})
        self.assertEqual([x["reason"] for x in json.loads(h.co("dspy-stale", json.dumps([json.loads(dspy_art)]), m26))], ["unstamped"])
        data = json.dumps({"artifact_id": json.loads(ref)["id"], "passed": True, "rendered_input": "i", "raw_output": "o", "score": None})
        call = json.loads(h.co("dspy-optimize-call", dspy_art, data, ""))
        self.assertEqual((call["template_id"], len(call["training_data"])), ("chain_of_thought", 1))
        stamped = json.loads(h.co("dspy-stamp", dspy_art, '{"demos": [1]}', m26, 1, NOW))
        self.assertEqual(stamped["metadata"]["optimized"], {"executor_version": "dspy-2.6", "optimized_at": NOW, "examples": 1})
        self.assertEqual(json.loads(h.co("dspy-stale", json.dumps([stamped]), m26)), [])
        self.assertEqual(h.co("dspy-stamp", dspy_art, "null", m26, 0, NOW).code, "adapter-failed")
        fb = json.loads(h.co("pick-artifact", summary, "Audit Prompt", "prompt_template", "gpt-4o"))
        self.assertEqual(fb["model_variant"], "openai")
        row = json.loads(h.sk("store.record-trace", st, json.dumps({"session_id": "w", "skill_id": "k", "artifact_id": fb["id"], "artifact_kind": "prompt_template", "started_at": NOW, "rendered_input": "Tell me about Mara", "raw_output": "About Mara", "assertions_run": 2, "assertions_passed": 1})))
        self.assertEqual(row["created_at"], NOW)
        examples = [json.loads(l) for l in h.sk("store.export-dspy-dataset", st, "w", None, None).strip().split("\n")]
        self.assertEqual(examples, [{"rendered_input": "Tell me about Mara", "raw_output": "About Mara", "passed": False, "score": 0.5, "skill_id": "k", "artifact_id": fb["id"], "trace_id": row["id"], "dspy_inputs": ["rendered_input"]}])
        lines = h.sk("store.export-traces", st, "w", None, None).strip().split("\n")
        self.assertEqual(json.loads(lines[0]), row)
        self.assertEqual(list(json.loads(lines[0]).keys())[:3], ["id", "session_id", "skill_id"])
        # Trace pages over wasi:keyvalue: the cursors cover the traces, in start order.
        for i in range(12):
            at = f"2026-11-22T10:00:{i:02d}.000Z"
            h.sk("store.record-trace", st, json.dumps({"session_id": "p", "skill_id": "k3" if i % 3 == 0 else "k", "artifact_id": "a", "artifact_kind": "prompt_template", "started_at": at, "completed_at": at, "rendered_input": f"in {i}"}))
        pages, after = [], None
        while True:
            page = json.loads(h.sk("store.trace-page", st, "p", None, None, after, 5))
            pages.append([r["rendered_input"] for r in page["items"]])
            after = page["next"]
            if after is None:
                break
        self.assertEqual(pages, [[f"in {i}" for i in range(0, 5)], [f"in {i}" for i in range(5, 10)], ["in 10", "in 11"]])
        k3 = json.loads(h.sk("store.trace-page", st, "p", "k3", None, None, 100))
        self.assertEqual(([r["rendered_input"] for r in k3["items"]], k3["next"]), (["in 0", "in 3", "in 6", "in 9"], None))
        out = h.sk("store.trace-page", st, None, None, None, None, 0)
        self.assertEqual((out.code, json.loads(out.details)["path"]), ("invalid-options", "pageSize"))
        # A model request (the shape question) lowered for a provider, as the core says, and
        # the answer a turn gives: the same body as the lowering of its parts by hand.
        mreq = {"purpose": "shape", "system": "Answer in JSON.", "prompt": "Which stages?", "schema": {"type": "object"}}
        opts = record(provider="gemini", system=None, tools=None, capabilities=None, settings=json.dumps({"model": "gemini-2.5-pro"}), resolved=[], limits=None)
        body = json.loads(h.co("lower-model-request", json.dumps(mreq), opts).body)
        by_hand = json.loads(h.lower({"role": "user", "parts": [{"type": "text", "text": "Which stages?"}]}, "gemini", {"system": "Answer in JSON.", "model": "gemini-2.5-pro", "output": {"schema": {"type": "object"}}}, {}).body)
        self.assertEqual(body, by_hand)
        self.assertEqual(body["generationConfig"]["responseMimeType"], "application/json")
        answer = json.loads(h.co("model-answer", json.dumps({"role": "assistant", "parts": [{"type": "text", "text": "{}"}], "metadata": {"usage": {"input_tokens": 4}}}), "gemini-2.5-pro"))
        self.assertEqual(answer, {"text": "{}", "usage": {"input_tokens": 4}, "model": "gemini-2.5-pro"})
        self.assertEqual(h.co("lower-model-request", "{}", opts).code, "invalid-request")
        ms = h.open_store(h.store, "composer-records")
        rec = self.expected["release-notes-developers"]["composition"]["invocation_record"]
        self.assertIsNone(h.call("record-invocation", ms, json.dumps(rec)))
        self.assertEqual(json.loads(h.call("invocations", ms, "thread-1")), [rec])
        # The authoring tools refuse an application composition, and write for an authoring one.
        app = json.dumps(self.expected["application-skill-writer"]["composition"])
        auth = json.dumps(self.expected["authoring-skill-writer"]["composition"])
        pkg = json.dumps({"name": "Made Here", "description": "x", "metadata": {"framing": "y"}})
        self.assertEqual(h.sk("store.call-authoring-tool", st, "create_skill", pkg, app, NOW).code, "unknown-tool")
        self.assertEqual(json.loads(h.sk("store.call-authoring-tool", st, "create_skill", pkg, auth, NOW))["name"], "Made Here")


def agent_cases():
    """The scripted agent runs of tests/agent with what the Rust driver recorded."""
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/agent/*.json"))):
        name = os.path.basename(path)
        snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"agent__runs@{name}.snap"))
        yield name, json.loads(read(path)), json.loads(snap)


class AgentInWasmtime(unittest.TestCase):
    """The agent loop in Wasmtime: `run-agent` with this host's model and tools, and the
    `agent-run` machine driven by hand, give the Rust driver's requests and thread."""

    def setup_case(self, h, case, requests):
        replies = list(case["replies"])

        def send(provider, body, step):
            requests.append(body)
            return json.dumps(replies.pop(0)).encode()

        def tool(t):
            def run(call):
                if "fail" in t:
                    raise RuntimeError(t["fail"])
                return t["output"]

            return run

        h.handlers.send = send
        h.handlers.tools = {n: tool(t) for n, t in case.get("tools", {}).items()}
        arbiter = None
        if "arbiter" in case:
            a = case["arbiter"]
            reg = h.ar("[static]skill-registry.build", json.dumps([a["spec"]]), "[]", a["tools"])
            arbiter = h.ar("[static]arbiter.create", reg, 2)
            h.ar("[method]arbiter.start", arbiter, a["lane"], a["spec"]["name"], "null")
        conv = h.conversation["[constructor]conversation"](h.store, None)
        for t in case["turns"]:
            h.conversation["[method]conversation.append"](h.store, conv, json.dumps(t), [])
        return conv, arbiter

    def test_run_agent_and_the_machine(self):
        h = Host()
        iface = h.inst.get_export_index(h.store, "promptloom:core/agent@0.1.0")
        ag = lambda name: Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, name, iface)))
        run_agent, create, next_ = ag("run-agent"), ag("[static]agent-run.create"), ag("[method]agent-run.next")
        turns_fn = Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, "[method]conversation.turns", h.inst.get_export_index(h.store, "promptloom:core/lowering@0.1.0"))))
        parse = Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, "parse-response", h.inst.get_export_index(h.store, "promptloom:core/response@0.1.0"))))
        n = 0
        for name, case, expected in agent_cases():
            o = case["options"]
            options = {"lower": o["lower"], "tools": o.get("tools"), "max_steps": o.get("max_steps")}
            requests = []
            conv, arbiter = self.setup_case(h, case, requests)
            store = h.open_store(h.store, f"agent-{name}")
            lane = case.get("arbiter", {}).get("lane")
            out = run_agent(h.store, conv, json.dumps({**options, "lane": lane}), arbiter, store)
            self.assertIsInstance(out, wc.Record, f"{name}: {out}")
            got = {"stop": out.stop, "steps": out.steps, "usage": json.loads(out.usage)}
            self.assertEqual(got, expected["outcome"], name)
            self.assertEqual(requests, expected["requests"], name)
            self.assertEqual(json.loads(turns_fn(h.store, conv)), expected["turns"], name)
            thread = json.loads(h.call("thread", store, "default"))
            self.assertEqual([t["role"] for t in thread], [t["role"] for t in expected["turns"][len(case["turns"]) :]], name)
            if arbiter is not None:
                self.assertEqual(json.loads(h.ar("[method]arbiter.run", arbiter, lane))["status"], expected["arbiter_status"])

            # The machine, this host performing each action.
            sent = []
            conv, arbiter = self.setup_case(h, case, sent)
            run = create(h.store, json.dumps({**options, "arbiter": arbiter is not None}))
            step = lambda ev, payload="": json.loads(next_(h.store, run, ev, payload))
            offer, reply = None, None
            action = step("start", json.dumps(case["turns"][-1]) if case["turns"] else "")
            while action["do"] != "done":
                d = action["do"]
                if d == "offer":
                    offer = h.ar("[method]arbiter.step-offer", arbiter, lane, json.dumps(o.get("tools", [])))
                    action = step("offer", offer)
                elif d == "propose":
                    call = action["call"]
                    p = h.ar("call-proposal", call["name"], json.dumps(call.get("input", {})), json.dumps(action["names"]))
                    action = step("verdict", h.ar("[method]arbiter.propose", arbiter, lane, p))
                elif d == "tool":
                    t = h.handlers.tools.get(action["name"])
                    if t is None:
                        action = step("no-tool")
                    else:
                        try:
                            action = step("output", json.dumps(t(action["call"])))
                        except RuntimeError as e:
                            action = step("failed", str(e))
                elif d == "append":
                    turn = reply if "turn" not in action else json.dumps(action["turn"])
                    h.conversation["[method]conversation.append"](h.store, conv, turn, [])
                    action = step("appended")
                elif d == "send":
                    opts = action["options"]
                    body = h.conversation["[method]conversation.lower"](h.store, conv, conversation_options(opts["provider"], opts)).body
                    reply = parse(h.store, opts["provider"], h.handlers.send(opts["provider"], body, action["step"]))
                    action = step("received", reply)
                elif d == "status":
                    status = json.loads(h.ar("[method]arbiter.run", arbiter, lane))["status"]
                    action = step("status", "true" if status == "running" else "false")
                else:
                    self.fail(f"unknown action {d}")
            self.assertEqual({k: action[k] for k in ("stop", "steps", "usage")}, expected["outcome"], name)
            self.assertEqual(sent, expected["requests"], name)
            self.assertEqual(json.loads(turns_fn(h.store, conv)), expected["turns"], name)
            n += 1
        self.assertGreaterEqual(n, 5)
        bad = create(h.store, '{"max_steps": 0}')
        self.assertEqual((error_class(bad), bad.code), ("invalid", "invalid-options"))


def artifact_cases():
    """The scripted artifact runs of tests/artifact_run with what the Rust driver recorded."""
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/artifact_run/*.json"))):
        name = os.path.basename(path)
        snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"artifact_run__runs@{name}.snap"))
        case = json.loads(read(path))
        yield case, read(os.path.join(ROOT, f"tests/skills/packages/{case['package']}.json")), json.loads(snap)


class ScriptedRunHost:
    """Answers a run's calls in order (a `{"fail": …}` answer fails), a clock ticking a second
    per reading; records the calls."""

    def __init__(self, run):
        self.answers = json.loads(json.dumps(run.get("answers", {})))
        self.calls = []
        self.tick = 0

    def answer(self, executor, request, kind=None):
        c = {"executor": executor, "request": request}
        if kind is not None:
            c["kind"] = kind
        self.calls.append(c)
        a = self.answers[executor].pop(0)
        if isinstance(a, dict) and "fail" in a:
            raise RuntimeError(a["fail"])
        return a

    def time(self):
        self.tick += 1
        return {"now": f"2026-11-22T10:00:{self.tick:02d}.000Z", "ms": self.tick * 1000}


def run_options(skill, run):
    o = {"skill": skill}
    for k in ["artifact", "model_id", "executors", "parameters", "context", "session_id", "pricing", "render_limits"]:
        if k in run:
            o[k] = run[k]
    return o


def kebab(code):
    return "".join(("-" + c.lower() if c.isupper() and i else c.lower()) for i, c in enumerate(code))


class ArtifactRunsInWasmtime(unittest.TestCase):
    """Artifact and skill runs in Wasmtime: `run-artifact` with this host's executors and the
    `artifact-run` machine driven by hand give the Rust driver's calls, traces and results."""

    def test_run_artifact_and_the_machine(self):
        h = Host()
        n = 0
        strip_keys = {"started_at", "completed_at", "created_at", "id", "trace"}

        def strip(x):
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k not in strip_keys}
            if isinstance(x, list):
                return [strip(v) for v in x]
            return x

        for case, pkg, expected in artifact_cases():
            skill = json.loads(h.sk("import-package", pkg, case["now"]))["skill"]
            for i, run in enumerate(case["runs"]):
                want = expected[i]
                names = json.dumps(run["skill_run"]) if "skill_run" in run else None
                s = ScriptedRunHost(run)
                h.handlers.complete = lambda request: s.answer("model", request)
                h.handlers.execute = lambda e, request: s.answer(e, request) if e in ("code", "dspy", "dspy-manifest") else s.answer("handler", request, e)
                store = h.sk("open-store", f"artifact-run-w{i}")
                out = h.co("run-artifact", json.dumps(run_options(skill, run)), names, store)
                if "error" in want:
                    self.assertEqual(out.code, kebab(want["error"]["code"]), run["name"])
                    self.assertEqual(out.message, want["error"]["message"], run["name"])
                else:
                    self.assertEqual(strip(json.loads(out)), strip(want["result"]), run["name"])
                self.assertEqual(s.calls, want["calls"], run["name"])
                lines = [l for l in h.sk("store.export-traces", store, None, None, None).split("\n") if l.strip()]
                self.assertEqual(len(lines), len(want["traces"]), run["name"])

                # The machine, this host performing each action with the scripted clock.
                s = ScriptedRunHost(run)
                r = h.co("[static]artifact-run.create", json.dumps(run_options(skill, run)), names)
                if is_error(r):
                    self.assertEqual(r.code, kebab(want["error"]["code"]), run["name"])
                    continue
                a = json.loads(h.co("[method]artifact-run.first", r))
                traces = []

                def answer(f):
                    try:
                        return "output", json.dumps(f())
                    except RuntimeError as e:
                        return "failed", str(e)

                while a["do"] != "done":
                    d = a["do"]
                    if d == "load":
                        found = next((x for x in skill["artifacts"] if x["id"] == a["id"]), None)
                        ev = ("loaded", json.dumps(found))
                    elif d == "time":
                        ev = ("time", json.dumps(s.time()))
                    elif d == "manifest":
                        ev = answer(lambda: s.answer("dspy-manifest", None))
                    elif d == "trace":
                        traces.append({"key": a["key"], "row": a["row"]})
                        ev = ("stored", "")
                    else:
                        ev = answer(lambda: s.answer(a["executor"], a["request"], a.get("kind")))
                    out = h.co("[method]artifact-run.next", r, ev[0], ev[1])
                    self.assertIsInstance(out, str, f"{run['name']}: {ev[0]} {ev[1][:200]} -> {getattr(out, 'payload', out)}")
                    a = json.loads(out)
                got = {"name": run["name"], "calls": s.calls, "traces": traces}
                got.update({"error": a["error"]} if "error" in a else {"result": a["result"]})
                self.assertEqual(got, want, run["name"])
                n += 1
        self.assertGreaterEqual(n, 10)


class ArbiterInWasmtime(unittest.TestCase):
    """Skill state machines in Wasmtime: validation, a registry, proposals, the log replayed."""

    def test_validation_registry_and_runs(self):
        h = Host()
        specs = {os.path.basename(f)[:-5]: read(f) for f in glob.glob(os.path.join(ROOT, "tests/arbiter/specs/*.json"))}
        tools = ["choir.memory.query", "choir.fs.read", "choir.fs.write", "search"]
        v = json.loads(h.ar("validate-skill-spec", specs["broken-unreachable"], tools))
        self.assertEqual((v["ok"], v["problems"][0]["code"]), (False, "unreachable-state"))
        files = [record(path="skills/b.json", text=specs["build-feature"]), record(path="skills/a.json", text=specs["broken-trap"]), record(path="skills/c.json", text="[1]")]
        bad = h.ar("load-skill-specs", files, tools)
        self.assertEqual(bad.code, "invalid-skill")
        self.assertEqual([p["file"] for p in json.loads(bad.details)["problems"]], ["skills/a.json", "skills/c.json"])
        self.assertEqual([s["name"] for s in json.loads(h.ar("load-skill-specs", files[:1], None))["specs"]], ["build_feature"])
        self.assertEqual(h.ar("[static]skill-registry.build", "[" + specs["broken-trap"] + "]", "[]", tools).code, "invalid-skill")
        # tool-builder and skill-builder: the package's seed file, read by this host.
        system = json.loads(h.sk("seed-skill-specs", read(os.path.join(ROOT, "pkg/system-skills.json"))))
        reg = h.ar("[static]skill-registry.build", json.dumps(system + [json.loads(specs["build-feature"])]), "[]", tools)
        self.assertEqual(h.ar("[method]skill-registry.names", reg), ["build_feature", "skill-builder", "tool-builder"])
        summary = h.ar("[method]skill-registry.summary", reg).rstrip("\n").split("\n")
        self.assertEqual([l.split(":")[0] for l in summary], ["Skills you can start", "- build_feature", "- skill-builder", "- tool-builder"])
        a = h.ar("[static]arbiter.create", reg, 2)
        self.assertEqual(json.loads(h.ar("[method]arbiter.start", a, "core", "build_feature", '{"feature": "x"}'))["state"], "understand")
        out = json.loads(h.ar("[method]arbiter.propose", a, "core", '{"type": "tool", "name": "choir.fs.write"}'))
        self.assertEqual((out["accepted"], out["error"]["code"]), (False, "tool-not-allowed"))
        out = json.loads(h.ar("[method]arbiter.propose", a, "core", '{"type": "transition", "event": "complete"}'))
        self.assertEqual(out["state"], "plan")
        run = json.loads(h.ar("[method]arbiter.run", a, "core"))
        self.assertEqual(json.loads(h.ar("[method]arbiter.replay", a, json.dumps(run["log"]))), run)
        self.assertTrue(h.ar("to-mermaid", specs["build-feature"], "plan").endswith("class plan current\n"))
        # The agent loop's offer and proposals, as a WASI host's loop uses them.
        offer = json.loads(h.ar("[method]arbiter.step-offer", a, "core", '[{"name": "choir.fs.read", "description": "Reads a file."}]'))
        self.assertIn("skill_transition", [t["name"] for t in offer["tools"]])
        self.assertIn("Objective:", offer["system"])
        safe, tool = next(iter(offer["names"].items()))
        self.assertNotIn(".", safe)
        self.assertEqual(json.loads(h.ar("call-proposal", safe, '{"path": "a"}', json.dumps(offer["names"]))), {"type": "tool", "name": tool, "arguments": {"path": "a"}})
        self.assertEqual(json.loads(h.ar("call-proposal", "skill_transition", '{"event": "done"}', "{}")), {"type": "transition", "event": "done"})


class SessionsInWasmtime(unittest.TestCase):
    """Sessions on the host's wasi:keyvalue bucket in Wasmtime: a crashed session resumes
    every lane at its last accepted step; a proposal is approved into a new registry."""

    def test_recovery_and_approval(self):
        h = Host()
        spec = read(os.path.join(ROOT, "tests/arbiter/specs/build-feature.json"))
        tools = ["choir.memory.query", "choir.fs.read", "choir.fs.write"]
        # The agents bucket is migrated to the package's system skills; their specs come back from it.
        seed = read(os.path.join(ROOT, "pkg/system-skills.json"))
        store = h.sk("open-store", "agents")
        first = json.loads(h.sk("store.seed", store, seed, "2026-11-23T10:00:00Z"))
        self.assertEqual((first["status"], first["upserted"]), ("created", ["tool-builder", "skill-builder"]))
        self.assertEqual(json.loads(h.sk("store.seed", store, seed, "2026-11-24T10:00:00Z"))["status"], "current")
        bad = h.sk("store.seed", store, '{"version": 2, "skills": [{"name": "x", "source": "user"}]}', "2026-11-24T10:00:00Z")
        self.assertEqual(bad.code, "invalid-skill")
        self.assertEqual({p["code"] for p in json.loads(bad.details)["problems"]}, {"not-system", "missing-field"})
        system = h.sk("store.skill-specs", store)
        self.assertEqual([s["name"] for s in json.loads(system)], ["skill-builder", "tool-builder"])
        # The catalog over an empty workspace and this account gives the same specs.
        cat = h.sk("open-catalog", "agents-ws", "agents")
        self.assertEqual(json.loads(h.sk("catalog.skill-specs", cat)), json.loads(system))
        reg = h.ar("[static]skill-registry.build", json.dumps(json.loads(system) + [json.loads(spec)]), "[]", tools)
        s = h.ar("[static]session.open", reg, "agents", "w-1", 1000, 2)
        h.ar("[method]session.start-skill", s, "core", "build_feature", '{"feature": "x"}', 1001)
        out = json.loads(h.ar("[method]session.propose", s, "core", '{"type": "tool", "name": "choir.memory.query"}', 1002))
        self.assertTrue(out["accepted"])
        self.assertEqual(h.ar("[method]session.lane", s, "core"), "waiting_tool")
        self.assertEqual(h.ar("[method]session.lane-event", s, "core", "tool_result", 1003), "reasoning")
        h.ar("[method]session.propose", s, "core", '{"type": "transition", "event": "complete"}', 1004)
        bad = h.ar("[method]session.lane-event", s, "core", "tool_result", 1005)
        self.assertEqual((bad.code, json.loads(bad.details)["reason"]), ("invalid-request", "invalid-lane-event"))
        before = json.loads(h.ar("[method]session.run", s, "core"))
        # Another host opens the same session from the bucket: a recovery.
        r = h.ar("[static]session.open", reg, "agents", "w-1", 9000, 2)
        hier = json.loads(h.ar("[method]session.hierarchy", r))
        self.assertEqual((hier["recoveries"], hier["last_seen"]), (1, 9000))
        after = json.loads(h.ar("[method]session.run", r, "core"))
        self.assertEqual((after["state"], after["step"]), (before["state"], before["step"]))
        self.assertEqual(json.loads(h.ar("[method]session.log", r))[-1]["event"], "recovered")
        self.assertTrue(h.ar("[method]session.stale", r, 9000 + 5001, 5000))
        # The tool-builder's proposal, stored, then approved into a new registry.
        h.ar("[method]session.start-skill", r, "b", "tool-builder", "{}", 9001)
        for i in range(3):
            h.ar("[method]session.propose", r, "b", '{"type": "transition", "event": "complete"}', 9002 + i)
        p = json.loads(h.ar("[method]session.propose", r, "b", '{"type": "tool", "name": "choir.propose.tool", "arguments": {"name": "http.get"}}', 9010))
        pid = p["proposal_id"]
        pending = json.loads(h.ar("list-proposals", "agents", "pending"))
        self.assertEqual([(x["id"], x["name"]) for x in pending], [(pid, "http.get")])
        row, reg2 = h.ar("approve-proposal", "agents", pid, reg, "ana", 9100)
        self.assertEqual(json.loads(row)["status"], "approved")
        again = h.ar("reject-proposal", "agents", pid, "bo", "late", 9200)
        self.assertEqual(json.loads(again.details)["reason"], "not-pending")
        self.assertEqual([d["decision"] for d in json.loads(h.ar("approval-log", "agents"))], ["approved"])
        spec2 = json.dumps({"name": "fetch", "description": "Fetch.", "initial_state": "go", "states": {"go": {"objective": "Go.", "allowed_tools": ["http.get"], "transitions": [{"on": "complete", "to": "done"}]}, "done": {"terminal": True}}})
        self.assertEqual(h.ar("[static]skill-registry.build", "[" + spec2 + "]", "[]", tools).code, "invalid-skill")
        s3 = h.ar("[static]session.open", reg2, "agents", "w-2", 9300, 2)
        h.ar("[method]session.start-skill", s3, "c", "skill-builder", "{}", 9301)
        for i in range(3):
            h.ar("[method]session.propose", s3, "c", '{"type": "transition", "event": "complete"}', 9302 + i)
        q = json.loads(h.ar("[method]session.propose", s3, "c", json.dumps({"type": "tool", "name": "choir.propose.skill", "arguments": {"spec": json.loads(spec2)}}), 9310))
        self.assertTrue(q["accepted"], q)
        h.ar("approve-proposal", "agents", q["proposal_id"], reg2, "ana", 9400)
        rebuilt = h.ar("install-approved", "agents", reg)
        self.assertIn("fetch", h.ar("[method]skill-registry.names", rebuilt))
        self.assertIn("waiting_tool --> reasoning : tool_result", h.ar("to-mermaid", json.dumps(json.loads(h.ar("session-machines"))["lane"]), None))


class GatewayInWasmtime(unittest.TestCase):
    """Contracts and the gateway in Wasmtime, with the handlers and the clock of this host."""

    def test_registry_gateway_and_typed_errors(self):
        h = Host()
        c = lambda f: read(os.path.join(ROOT, "tests/contracts", f))
        reg = h.gw("[constructor]contract-registry")
        self.assertEqual(json.loads(h.gw("[method]contract-registry.register", reg, c("valid/cross-title-link.yaml")))["version"], "0.9.0")
        for f in ["valid/cross-title-link-1.0.yaml", "valid/order-inventory-backup.yaml", "valid/order-inventory.json"]:
            h.gw("[method]contract-registry.register", reg, c(f))
        bad = h.gw("[method]contract-registry.register", reg, c("invalid/retry-without-key.yaml"))
        self.assertEqual(bad.code, "invalid-contract")
        self.assertEqual([p["code"] for p in json.loads(bad.details)["problems"]], ["unsafe-retry", "unsafe-retry"])
        snap = read(os.path.join(ROOT, "tests/snapshots/gateway__the_planner_section_is_generated_per_provider_and_byte_stable.snap"))
        want = json.loads(snap[snap.index("\n---\n", 4) + 5 :])
        for provider in PROVIDERS:
            opts = {"provider": provider, "surface": "chat", "user": "u1", "flags": ["cross_title_link_enabled"], "tier": "adult"}
            self.assertEqual(json.loads(h.gw("[method]contract-registry.planner-section", reg, "related titles for Berserk", json.dumps(opts))), want[provider])
        runs = {}

        def ctl(inp, ctx):
            runs[inp["title_id"]] = runs.get(inp["title_id"], 0) + 1
            h.handlers.t += 3
            if inp["title_id"].startswith("DOWN"):
                return ("err", {"message": "upstream", "status": 502})
            if inp["title_id"].startswith("GONE"):
                return ("err", {"code": "TITLE_NOT_FOUND", "message": "no such title"})
            return {"recommendations": [{"title_id": "X", "similarity": 0.5, "reason": "k=%d" % inp["k"]}]}

        h.handlers.handlers = {"cross-title-link": ctl, "order-inventory": lambda i, x: {"hold_id": "H-" + i["order_id"]}}
        g = h.gw("[constructor]gateway", reg, None)
        chat = {"surface": "chat", "user": "u1", "session": "s1", "flags": ["cross_title_link_enabled"], "tier": "adult", "version": "0.9"}
        call = lambda name, inp, o=chat: h.gw("[method]gateway.call", g, name, json.dumps(inp), json.dumps(o))
        self.assertEqual(json.loads(call("cross-title-link", {"title_id": "BRSK_001", "locale": "en-US"}))["recommendations"][0]["reason"], "k=10")
        self.assertEqual(call("cross-title-link", {"title_id": "BRSK_001", "locale": "en-US"}, dict(chat, flags=[])).code, "capability-denied")
        self.assertEqual(call("cross-title-link", {"title_id": "x", "locale": "en-US"}).code, "invalid-input")
        self.assertEqual(call("order-inventory", {"order_id": "ORD-1"}, dict(chat, version=None, tier="teen")).code, "capability-denied")
        self.assertEqual(json.loads(call("order-inventory", {"order_id": "ORD-1"}, dict(chat, version=None))), {"hold_id": "H-ORD-1"})
        # Duplicates, retries by class (the host's waits), a declared do-not-retry error.
        call("cross-title-link", {"title_id": "ABCD_001", "locale": "en-US"})
        call("cross-title-link", {"title_id": "ABCD_001", "locale": "en-US"})
        self.assertEqual(runs["ABCD_001"], 1)
        self.assertEqual(call("cross-title-link", {"title_id": "DOWN_001", "locale": "en-US"}).code, "handler-failed")
        self.assertEqual((runs["DOWN_001"], len(h.handlers.sleeps)), (2, 1))
        gone = call("cross-title-link", {"title_id": "GONE_001", "locale": "en-US"})
        self.assertEqual((error_class(gone), gone.code, json.loads(gone.details)["error_code"], runs["GONE_001"]), ("failed", "handler-failed", "TITLE_NOT_FOUND", 1))
        # 60 calls per user per minute: the 61st is refused with a retry-after.
        tags = [call("cross-title-link", {"title_id": "RATE_%03d" % i, "locale": "en-US"}, dict(chat, user="burst")) for i in range(61)]
        limited = tags[-1]
        self.assertEqual(limited.code, "rate-limited")
        self.assertEqual(error_class(limited), "unavailable")
        self.assertGreater(json.loads(limited.details)["retry_after_ms"], 0)
        # The canary: 5 % of chat users on 1.0, ±1 %.
        on = sum(1 for i in range(20000) if json.loads(h.gw("[method]contract-registry.resolve", reg, "cross-title-link", "chat", "user-%d" % i, None, 0.0))["version"] == "1.0.0")
        self.assertLess(abs(on / 20000 - 0.05), 0.01)
        recs = json.loads(h.gw("[method]gateway.records", g))
        self.assertIn("cached", [r["outcome"] for r in recs])
        spans = json.loads(h.gw("records-to-otel", json.dumps(recs[:2])))["resourceSpans"][0]["scopeSpans"][0]["spans"]
        self.assertEqual(len(spans[0]["traceId"]), 32)
        self.assertFalse(json.loads(h.gw("check-contract", c("invalid/no-owner-no-budget.yaml")))["ok"])
        checked = json.loads(h.gw("[method]gateway.verify", g, "order-inventory"))
        self.assertEqual([(c["input"]["order_id"], c["ok"]) for c in checked], [("ORD-0", True)])
        bad = h.gw("[method]gateway.verify", g, "cross-title-link")
        self.assertEqual(bad.code, "invalid-contract")
        self.assertIn("cross-title-link@1.0.0.output", [p["path"] for p in json.loads(bad.details)["problems"]])
        review = json.loads(h.gw("[method]contract-registry.review", reg, json.dumps(recs), 1.0))
        self.assertIn("order-inventory-backup", [r["contract"] for r in review["rarely_called"]])


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
                snap = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"lower__lowered@{name}.{provider}.snap"))
                body = snap.split("\n", 1)[0]
                report = json.loads(snap[snap.index("report:\n") + 8 :])
                out = self.host.lower(case["message"], provider, case.get("options", {}), case.get("resolve", {}), case.get("byProvider"))
                self.assertIsInstance(out, wc.Record, f"{name}/{provider}: {out}")
                self.assertEqual(out.body, body, f"{name}/{provider}")
                self.assertEqual(json.loads(out.report), report, f"{name}/{provider}")
                n += 1
        self.assertGreaterEqual(n, 100)

    def test_errors_are_wit_variants(self):
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/lower/errors/*.json"))):
            case = json.loads(read(path))
            name = os.path.basename(path)[:-5]
            lines = snapshot_content(os.path.join(ROOT, "tests/snapshots", f"lower__errors@{name}.json.snap")).strip().split("\n")
            for line in lines:
                provider, rest = line.split(": ", 1)
                out = self.host.lower(case["message"], provider, case.get("options", {}), {}, case.get("byProvider"))
                if rest == "ok":
                    self.assertIsInstance(out, wc.Record)
                    continue
                want = json.loads(rest)
                tag = "".join("-" + c.lower() if c.isupper() else c for c in want["code"]).lstrip("-")
                self.assertTrue(is_error(out), f"{name}/{provider}")
                self.assertEqual(out.code, tag)
                self.assertEqual(out.message, want["message"])
                self.assertEqual(json.loads(out.details), want["details"])
                self.assertEqual(out.path, want["details"].get("path"))
        alive = self.host.lower({"parts": [{"type": "text", "text": "alive"}]}, "gemini", {}, {})
        self.assertEqual(alive.body, '{"contents":[{"role":"user","parts":[{"text":"alive"}]}]}')

    def test_resolve_requests_plan_what_to_ask(self):
        case = json.loads(read(os.path.join(ROOT, "tests/lower/inputs/mentions.json")))
        got = self.host.requests_fn(self.host.store, json.dumps(case["message"]))
        self.assertEqual([(r.part, r.kind, json.loads(r.request)) for r in got], [
            (2, "file", {"type": "file", "part": 2, "ref": {"kind": "path", "path": "src/icon.svg", "range": {"start": 1, "end": 2}}}),
            (3, "mention", {"type": "mention", "part": 3, "target": {"kind": "symbol", "id": "sym:Icon"}}),
            (4, "mention", {"type": "mention", "part": 4, "target": {"kind": "node", "id": "n-404"}}),
        ])
        blob = {"parts": [{"type": "file-attachment", "blob": {"content_id": "sha256-ab"}, "mime": "image/png"}]}
        got = self.host.requests_fn(self.host.store, json.dumps(blob))
        self.assertEqual([(r.part, r.kind) for r in got], [(0, "blob")])
        bad = self.host.requests_fn(self.host.store, "[1")
        self.assertEqual(bad.code, "invalid-message")

    def test_default_capabilities(self):
        caps = json.loads(self.host.caps_fn(self.host.store, "gemini"))
        self.assertIn("audio/flac", caps["audio"]["mimes"])


def catalog(*commands):
    return record(builtins=True, commands=[json.dumps(c) for c in commands], mentions=[])


class CompositorInWasmtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.host = Host()

    def open(self, name):
        res = self.host.open_store(self.host.store, name)
        self.assertIsInstance(res, wc.ResourceAny)
        return res

    def submit(self, res, message, cat, options, answers=None):
        # result<submit-step, error>: the step (a variant), or the error record.
        return self.host.call("submit", res, json.dumps(message), cat, json.dumps(options), answers)

    def test_submit_get_history_lower(self):
        h = self.host
        res = self.open("chat")
        cat = catalog({"name": "review", "body": "Review $1", "arguments": [{"name": "file", "required": True}]})
        parts = json.loads(h.parse_input(h.store, "/review src/a.ts", cat)) + json.loads(h.parse_input(h.store, "and @selection", cat))
        message = {"role": "user", "parts": parts}
        step = self.submit(res, message, cat, {"now": 7})
        self.assertEqual(step.tag, "needs")
        self.assertEqual(json.loads(step.payload)[0]["kind"], "selection")
        step = self.submit(res, message, cat, {"now": 7}, [record(part=2, value=json.dumps({"text": "sel"}))])
        self.assertEqual(step.tag, "done")
        done = json.loads(step.payload)
        self.assertEqual(done["id"], "default/0000000001")
        self.assertEqual(json.loads(h.call("get", res, done["id"])), done["message"])
        self.assertEqual(len(json.loads(h.call("history", res, "default"))), 1)
        self.assertEqual([x["seq"] for x in json.loads(h.call("list", res, "default"))], [1])
        opts = record(provider="anthropic", system=None, tools=None, capabilities=None, settings=None, resolved=[], limits=None)
        out = h.call("lower", res, done["id"], opts)
        self.assertEqual(
            out.body,
            '{"messages":[{"role":"user","content":[{"type":"text","text":"Review src/a.ts"},{"type":"text","text":"and "},'
            '{"type":"text","text":"<editor_context kind=\\"selection\\">{\\"text\\":\\"sel\\"}</editor_context>"}]}]}',
        )
        # Rows are in the host's bucket, one per part.
        keys = sorted(h.kv.buckets["chat"])
        self.assertIn("messages:default/0000000001", keys)
        self.assertEqual(len([k for k in keys if k.startswith("parts:")]), 3)

    def test_pages_of_a_session(self):
        h = self.host
        res = self.open("paged")
        cat = catalog()
        for i in range(1, 24):
            step = self.submit(res, {"role": "user", "parts": [{"type": "text", "text": f"m{i}"}]}, cat, {"session": "p", "now": 7})
            self.assertEqual(step.tag, "done")
        last = json.loads(h.call("page", res, "thread", "p", None, 10))
        self.assertEqual((last["page"], last["prev"], last["next"], len(last["items"])), (2, 1, None, 4))
        first = json.loads(h.call("page", res, "list", "p", 0, 10))
        self.assertEqual([x["seq"] for x in first["items"]], list(range(1, 10)))
        self.assertEqual(first["next"], 1)
        every = []
        at = 0
        while at is not None:
            p = json.loads(h.call("page", res, "history", "p", at, 10))
            every += p["items"]
            at = p["next"]
        self.assertEqual(every, json.loads(h.call("history", res, "p")))
        out = h.call("page", res, "thread", "p", None, 50)
        self.assertEqual((out.code, json.loads(out.details)["path"]), ("invalid-options", "pageSize"))

    def test_v1_rows_read_as_v2(self):
        h = self.host
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/compose/v1/*.json"))):
            fixture = json.loads(read(path))
            name = "v1-" + os.path.basename(path)
            res = self.open(name)
            for table, rows in fixture["rows"].items():
                for key, value in rows.items():
                    h.kv.buckets[name][f"{table}:{key}"] = json.dumps(value).encode()
            before = dict(h.kv.buckets[name])
            got = json.loads(h.call("get", res, fixture["id"]))
            self.assertEqual(got, fixture["expect_v2"])
            self.assertEqual(got["metadata"]["schema_version"], 2)
            self.assertEqual(h.kv.buckets[name], before, "reading rewrote rows")

    def test_bad_input_and_failing_store_write_nothing(self):
        h = self.host
        res = self.open("failing")
        cat = catalog({"name": "review", "body": "Review $1", "arguments": [{"name": "file", "required": True}]})
        ok = self.submit(res, {"parts": [{"type": "text", "text": "kept"}]}, cat, {})
        self.assertEqual(ok.tag, "done")
        before = dict(h.kv.buckets["failing"])
        err = self.submit(res, {"parts": [{"type": "command", "id": "/review"}]}, cat, {})
        self.assertTrue(is_error(err))
        self.assertEqual(err.code, "missing-argument")
        self.assertEqual(json.loads(err.details)["missing"], ["file"])
        h.kv.fail_after = 1  # the first part row lands, then the store fails
        err = self.submit(res, {"parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, cat, {})
        h.kv.fail_after = None
        self.assertEqual(err.code, "store-failed")
        self.assertIn("disk full", err.message)
        history = json.loads(h.call("history", res, "default"))
        self.assertEqual([m["parts"][0]["text"] for m in history], ["kept"])
        again = self.submit(res, {"parts": [{"type": "text", "text": "after"}]}, cat, {})
        self.assertEqual(json.loads(again.payload)["seq"], 2)
        missing = h.call("get", res, "nope")
        self.assertEqual(missing.code, "not-found")
        self.assertEqual(error_class(missing), "refused")
        self.assertEqual(set(before) - set(h.kv.buckets["failing"]), set())


NOW = "2026-11-22T08:00:00Z"


class SkillsInWasmtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.host = Host()
        cls.seed = read(os.path.join(ROOT, "tests/skills/packages/consistency-checker.json"))

    def test_store_operations_over_a_bucket(self):
        h = self.host
        st = h.sk("open-store", "skills-a")
        summary = json.loads(h.sk("store.create", st, self.seed, NOW))
        self.assertEqual([a["kind"] for a in summary["artifacts"]], ["description", "prompt_template", "code_template", "dspy_module"])
        imported = json.loads(h.sk("import-package", self.seed, NOW))["skill"]
        self.assertEqual(json.loads(h.sk("store.get", st, imported["id"])), imported)
        self.assertEqual(json.loads(h.sk("store.get-by-name", st, "Consistency Checker")), imported)
        self.assertIsNone(h.sk("store.get", st, "nope"))
        arts = json.loads(h.sk("store.get-artifacts", st, imported["id"], ["dspy_module"]))
        self.assertEqual([a["name"] for a in arts], ["DSPy Checker"])
        self.assertEqual(json.loads(h.sk("store.get-artifact", st, arts[0]["id"])), arts[0])
        self.assertEqual([s["name"] for s in json.loads(h.sk("store.list", st))], ["Consistency Checker"])
        # Errors are WIT variants: already-exists, invalid-skill (every problem), not-found.
        self.assertEqual(h.sk("store.create", st, self.seed, NOW).code, "already-exists")
        bad = h.sk("store.put", st, json.dumps({"name": "x", "description": "", "version": "1"}), NOW)
        self.assertEqual(bad.code, "invalid-skill")
        self.assertEqual([p["path"] for p in json.loads(bad.details)["problems"]], ["description", "version"])
        self.assertEqual(h.sk("store.delete", st, "nope").code, "not-found")
        self.assertEqual(json.loads(h.sk("store.delete", st, imported["id"]))["artifacts"], 4)
        self.assertEqual(h.kv.buckets["skills-a"], {})

    def test_a_bucket_failing_mid_write_leaves_the_skill_invisible(self):
        h = self.host
        st = h.sk("open-store", "skills-fail")
        h.kv.fail_after = 3  # three artifact rows land, then the store fails
        err = h.sk("store.create", st, self.seed, NOW)
        h.kv.fail_after = None
        self.assertEqual(err.code, "store-failed")
        self.assertEqual(json.loads(h.sk("store.list", st)), [])
        self.assertIsNone(h.sk("store.get-by-name", st, "Consistency Checker"))
        # Writing again completes it (the half-written rows are replaced).
        json.loads(h.sk("store.put", st, self.seed, NOW))
        self.assertEqual(len(json.loads(h.sk("store.get-by-name", st, "Consistency Checker"))["artifacts"]), 4)

    def test_skill_md_and_catalog(self):
        h = self.host
        md = "---\nname: pdf-tools\ndescription: Work with PDFs.\nallowed-tools: Bash(python3:*) Read\n---\n# PDF\n"
        files = [record(path="scripts/x.py", content="print(1)\n", base64=False)]
        imp = json.loads(h.sk("import-skill-md", md, files, "pdf-tools", NOW))
        self.assertEqual(imp["skill"]["metadata"]["tool_surface"], ["Bash(python3:*)", "Read"])
        out = json.loads(h.sk("export-skill-md", json.dumps(imp["skill"])))
        self.assertEqual(out["text"], md)
        self.assertEqual(out["files"], [{"path": "scripts/x.py", "content": "print(1)\n", "base64": False}])
        self.assertEqual(h.sk("import-skill-md", "no frontmatter", [], None, NOW).code, "invalid-skill")
        self.assertEqual(h.sk("model-family", "claude-opus-4"), "anthropic")
        ws = h.sk("open-store", "cat-ws")
        h.sk("store.create", ws, json.dumps(imp["skill"]), NOW)
        cat = h.sk("open-catalog", "cat-ws", "cat-acc")
        body = json.dumps({"skills": [json.loads(self.seed)]})
        report = json.loads(h.sk("catalog.apply-sync", cat, "https://m.test/c.json", body, '"e1"', NOW))
        self.assertEqual(report["upserted"], ["Consistency Checker"])
        self.assertEqual(h.sk("catalog.sync-etag", cat, "https://m.test/c.json"), '"e1"')
        r = json.loads(h.sk("catalog.match", cat, "are there any contradictions in chapter 2", 3))
        self.assertEqual((r[0]["name"], r[0]["scope"], r[0]["tier"]), ("Consistency Checker", "account", "exact"))
        self.assertEqual(h.sk("catalog.apply-sync", cat, "https://m.test/c.json", "{", '"e2"', NOW).code, "sync-failed")
        self.assertEqual(h.sk("catalog.sync-etag", cat, "https://m.test/c.json"), '"e1"')
        # A disabled skill (metadata.enabled: false) is listed but never matched.
        off = {"name": "Quiet Checker", "description": "d", "trigger_phrases": ["quietly check it"], "metadata": {"enabled": False}}
        h.sk("store.create", ws, json.dumps(off), NOW)
        h.sk("catalog.refresh", cat)
        self.assertIn("Quiet Checker", [s["name"] for s in json.loads(h.sk("catalog.list", cat))])
        d = json.loads(h.sk("catalog.decide", cat, "are there any contradictions in chapter 2", 3, ""))
        self.assertEqual((d["action"], d["reason"], d["skills"][0]["name"]), ("activate", "exact", "Consistency Checker"))
        self.assertEqual(d["skills"][0]["artifacts"], ["Overview", "Cross-Reference Script", "DSPy Checker"])
        self.assertEqual(json.loads(h.sk("decide", "zebra", "[]", ""))["action"], "direct")
        self.assertEqual(h.sk("catalog.decide", cat, "x", 3, '{"activate": 2}').code, "invalid-options")
        names = [r["name"] for r in json.loads(h.sk("catalog.match", cat, "quietly check it", 5))]
        self.assertNotIn("Quiet Checker", names)



class FaultsInWasmtime(unittest.TestCase):
    """Every write position of a store call fails in turn (then every later write, as a
    bucket that went down): readers see the state before the call, while the bucket is
    down and after it heals, and the call then lands. Large values go in chunks."""

    @classmethod
    def setUpClass(cls):
        cls.host = Host()
        cls.count = 0

    def bucket(self):
        FaultsInWasmtime.count += 1
        return f"faults-{FaultsInWasmtime.count}"

    def skill(self, name, n, extra=""):
        return json.dumps({
            "id": f"skill-{name}", "name": name, "description": f"Does {name}{extra}", "version": "1.0.0",
            "artifacts": [{"id": f"{name}-a{i}", "kind": "description", "name": f"Part {i}", "content": f"Part {i} of {name}{extra}"} for i in range(n)],
        })

    def submit(self, res, text, opts):
        cat = record(builtins=True, commands=[], mentions=[])
        return self.host.call("submit", res, json.dumps({"role": "user", "parts": [{"type": "text", "text": text}]}), cat, json.dumps(opts), None)

    def outcome(self, value):
        return value.code if is_error(value) else value

    @staticmethod
    def error_tag(value):
        """The WIT error's code, or None for a success (a submit's `done` step is a variant too)."""
        if is_error(value):
            return value.code
        return None

    def every_position(self, open_store, setup, call, view):
        h = self.host
        ref = open_store(self.bucket())
        setup(ref)
        before = view(ref)
        h.kv.writes = 0
        self.assertIsNone(self.error_tag(call(ref)))
        writes = h.kv.writes
        after = view(ref)
        self.assertGreaterEqual(writes, 3)
        for n in range(1, writes + 1):
            res = open_store(self.bucket())
            setup(res)
            h.kv.writes = 0
            h.kv.fail_at = n
            self.assertEqual(self.error_tag(call(res)), "store-failed", f"write {n}")
            self.assertEqual(view(res), before, f"write {n}: readers while the bucket is down")
            h.kv.fail_at = None
            self.assertEqual(view(res), before, f"write {n}: readers after it heals")
            self.assertIsNone(self.error_tag(call(res)), f"write {n}: the retry")
            self.assertEqual(view(res), after, f"write {n}: after the retry")

    def test_submit_with_an_explicit_id(self):
        h = self.host
        opened = lambda b: h.open_store(h.store, b)
        view = lambda r: (h.call("history", r, "default"), self.outcome(h.call("get", r, "client-42")))
        self.every_position(opened, lambda r: self.submit(r, "one", {"now": 1}), lambda r: self.submit(r, "two", {"now": 2, "id": "client-42"}), view)

    def test_skill_create_put_update_delete(self):
        h = self.host
        opened = lambda b: h.sk("open-store", b)
        view = lambda r: (h.sk("store.list", r), h.sk("store.get", r, "skill-alpha"), h.sk("store.get-artifact", r, "alpha-a1"))
        alpha3 = lambda r: h.sk("store.create", r, self.skill("alpha", 3), NOW)
        self.every_position(opened, lambda r: h.sk("store.create", r, self.skill("beta", 1), NOW), alpha3, view)
        self.every_position(opened, alpha3, lambda r: h.sk("store.put", r, self.skill("alpha", 2, " (v2)"), NOW), view)
        update = json.dumps({"id": "skill-alpha", "name": "alpha", "description": "Renamed", "version": "1.1.0"})
        self.every_position(opened, alpha3, lambda r: h.sk("store.update", r, update, NOW), view)
        self.every_position(opened, alpha3, lambda r: h.sk("store.delete", r, "skill-alpha"), view)

    def test_large_texts_are_chunked_and_read_back(self):
        # wasmtime-py moves list<u8> element by element (about 3.5 s per MB both ways), so
        # the test command takes 1 and 3 MB; PROMPTLOOM_LARGE=1 adds 10 and 64 MB (4.5 min).
        h = self.host
        res = h.open_store(h.store, self.bucket())
        h.kv.largest = 0
        sizes = [1, 3, 10, 64] if os.environ.get("PROMPTLOOM_LARGE") == "1" else [1, 3]
        for mb in sizes:
            text = f"{mb}:".ljust(mb << 20, "x")
            done = json.loads(self.submit(res, text, {"now": mb}).payload)
            got = json.loads(h.call("get", res, done["id"]))
            self.assertEqual(got["parts"][0]["text"], text, f"{mb} MB")
        self.assertLessEqual(h.kv.largest, 256 * 1024)
        # The instance keeps answering.
        self.assertEqual(len(json.loads(h.call("history", res, "default"))), len(sizes))


class HardeningInWasmtime(unittest.TestCase):
    """Inputs that once trapped the instance are typed errors; the instance keeps answering."""

    @classmethod
    def setUpClass(cls):
        cls.host = Host()

    def alive(self):
        out = self.host.lower({"role": "user", "parts": [{"type": "text", "text": "hi"}]}, "anthropic", {}, {})
        self.assertIn('"hi"', out.body)

    def test_deep_yaml_and_templates(self):
        h = self.host
        md = "---\nname: deep\ndescription: d\nmetadata:\n  " + "? " * 10000 + "x\n---\nbody\n"
        self.assertEqual(h.sk("import-skill-md", md, [], None, NOW).code, "invalid-skill")
        self.alive()
        for src in ["{{ " + "1 + " * 10000 + "1 }}", "{{ x" + "|upper" * 10000 + " }}", "{% if a %}x" + "{% elif a %}y" * 10000 + "{% endif %}"]:
            skill = {"name": "deep", "description": "d", "metadata": {"framing": {"artifact": "F"}}, "artifacts": [{"kind": "prompt_template", "name": "F", "content": src}]}
            report = json.loads(h.sk("validate-skill", json.dumps(skill)))
            self.assertFalse(report["valid"])
            step = h.co("compose", json.dumps({"skill_package": skill, "user_request": "x", "thread_id": "t"}))
            self.assertEqual((error_class(step), step.code), ("invalid", "malformed-template"))
            self.alive()

    def test_deep_json_is_limit_exceeded(self):
        deep = {"role": "user", "parts": [{"type": "text", "text": "x", "extra": json.loads("[" * 500 + "]" * 500)}]}
        out = self.host.lower(deep, "anthropic", {}, {})
        self.assertTrue(is_error(out))
        self.assertEqual(out.code, "limit-exceeded")
        self.alive()

    def test_lower_many_and_inspect(self):
        h = self.host
        ref = {"type": "file-ref", "ref": {"path": "a.txt"}}
        msgs = [{"role": "user", "parts": [{"type": "text", "text": "one"}]}, {"role": "user", "parts": [{"type": "text", "text": "see"}, ref]}, {"role": "user", "parts": []}]
        opts = record(provider="gemini", system=None, tools=None, capabilities=None, settings=None, resolved=[], limits=None)
        lower_many = Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, "lower-many", h.inst.get_export_index(h.store, "promptloom:core/lowering@0.1.0"))))
        out = lower_many(h.store, json.dumps(msgs), opts, [record(turn=1, resolved=resolved_list({"1": {"text": "FILE TEXT"}}))])
        # Each message's result<lowered, error>: two records, so wasmtime-py tags them.
        out = [x.payload for x in out]
        self.assertEqual(len(out), 3)
        self.assertIn("one", out[0].body)
        self.assertIn("FILE TEXT", out[1].body)
        self.assertEqual(out[2].code, "empty-message")
        self.assertEqual(lower_many(h.store, "5", opts, []).code, "invalid-message")
        inspect = Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, "inspect", h.inst.get_export_index(h.store, "promptloom:core/compositor@0.1.0"))))
        msg = json.dumps({"role": "user", "parts": [{"type": "text", "text": "look at "}, ref]})
        v = json.loads(inspect(h.store, msg, record(provider="anthropic", system=None, tools=None, capabilities=None, settings=None, resolved=resolved_list({"1": {"text": "hello"}}), limits=None)))
        self.assertEqual([c["label"] for c in v["user"]], ["look at ", "a.txt"])
        self.assertIn("hello", json.dumps(v["model"]["body"]))
        self.assertEqual(inspect(h.store, "{", opts).code, "invalid-message")
        # Skill listing with filters.
        st = h.sk("open-store", "filters-wasmtime")
        list_filtered = Func(h.inst.get_func(h.store, h.inst.get_export_index(h.store, "[method]skill-store.list-filtered", h.inst.get_export_index(h.store, "promptloom:core/skills@0.1.0"))))
        for name, tags, enabled in [("On", ["pdf"], True), ("Off", ["pdf"], False), ("Other", [], True)]:
            h.sk("store.create", st, json.dumps({"name": name, "description": "d", "tags": tags, "metadata": {"enabled": enabled}}), NOW)
        names = lambda f: [s["name"] for s in json.loads(list_filtered(h.store, st, json.dumps(f)))]
        self.assertEqual(names({"tags": ["pdf"]}), ["Off", "On"])
        self.assertEqual(names({"tags": ["pdf"], "enabled": True}), ["On"])
        self.assertEqual(names({}), ["Off", "On", "Other"])
        self.assertEqual(list_filtered(h.store, st, '{"tags": "pdf"}').code, "invalid-options")
        self.alive()

    def test_limits_in_the_options_records(self):
        h = self.host
        msg = {"role": "user", "parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}]}
        out = h.lower(msg, "anthropic", {"limits": {"max_parts": 2}}, {})
        self.assertEqual(out.code, "limit-exceeded")
        self.assertEqual(json.loads(out.details)["limit"], "max_parts")
        self.assertIsInstance(h.lower(msg, "anthropic", {"limits": {"max_parts": 3}}, {}), wc.Record)
        turns = json.dumps([msg, {"role": "assistant", "parts": [{"type": "text", "text": "ok"}]}, msg])
        out = h.conversation["lower-conversation"](h.store, turns, conversation_options("gemini", {"limits": {"max_turns": 2}}), [])
        self.assertEqual(out.code, "limit-exceeded")
        bad = h.lower(msg, "anthropic", {"limits": {"max_parts": "many"}}, {})
        self.assertEqual(bad.code, "invalid-options")
        self.alive()


if __name__ == "__main__":
    unittest.main()
